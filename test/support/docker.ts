// The Docker engine of the container tests (test/container, and Redis in containers when
// TEST_REDIS=container). Every container runs on the host network: the engine is started without a bridge
// (scripts/dockerd.sh), so containers listen on loopback ports the tests pick, as processes would.
// Where no engine answers, the container tests are skipped, unless POOLSCOPE_REQUIRE_DOCKER=1 (CI sets it),
// which makes them fail instead.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

/** Debian's client (20.10) builds with its own BuildKit; a newer client without buildx cannot. */
export const DOCKER = process.env.DOCKER ?? (existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker');

/** The Redis image of the tests (scripts/container-bases.sh makes a stand-in from Debian's redis-server). */
export const REDIS_IMAGE = process.env.POOLSCOPE_TEST_REDIS_IMAGE ?? 'redis:7.2';

const run = promisify(execFile);

function answers(): boolean {
  try {
    execFileSync(DOCKER, ['info'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/** Whether an engine answers; throws where one is required (POOLSCOPE_REQUIRE_DOCKER=1) and none does. */
export const dockerAnswers: boolean = (() => {
  const ok = answers();
  if (!ok && process.env.POOLSCOPE_REQUIRE_DOCKER === '1') {
    throw new Error(`no Docker engine answers (${DOCKER} info), and POOLSCOPE_REQUIRE_DOCKER=1: start one with scripts/dockerd.sh start`);
  }
  return ok;
})();

/** `docker ARGS`, its stdout trimmed; a failure carries stderr. */
export async function docker(args: string[], options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  try {
    const { stdout } = await run(DOCKER, args, { timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024, env: options.env ?? process.env });
    return stdout.trim();
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`docker ${args.join(' ')} failed: ${String((error as Error).message).split('\n')[0]}\n${stderr ?? ''}${stdout ?? ''}`.slice(0, 8000));
  }
}
