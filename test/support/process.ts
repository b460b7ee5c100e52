// Run `poolscope` as a child process (the real binary): `serve` until stopped (startPoolscope: its pino lines
// collected, stopped cleanly), or any command to its end (runPoolscope). Every stdout line of either is
// checked as a log line (log-lines.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { checkLogLine, checkLogText } from './log-lines.js';
import { freePort } from './redis-server.js';
import { waitFor } from './wait.js';

export { freePort };

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface PoolscopeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Parsed pino lines from stdout. */
  logs: Record<string, unknown>[];
  stderr: () => string;
  /** SIGTERM and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

export interface PoolscopeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** This process's environment without its POOLSCOPE_* names, so a child reads only what a test gives it. */
export function environmentWithoutPoolscope(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('POOLSCOPE_')));
}

/**
 * Runs `poolscope <args>` (bin/poolscope.js on the dist/ build) to its end, with no POOLSCOPE_* variable of
 * this process plus `env`; its stdout lines are checked as log lines.
 */
export function runPoolscope(args: string[], options: { env?: Record<string, string | undefined>; timeoutMs?: number } = {}): Promise<PoolscopeRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['bin/poolscope.js', ...args],
      { cwd: REPO_ROOT, env: { ...environmentWithoutPoolscope(), ...options.env }, timeout: options.timeoutMs ?? 20_000 },
      (_error, stdout, stderr) => {
        checkLogText(stdout, `poolscope ${args[0] ?? ''} stdout`);
        resolve({ code: child.exitCode, stdout, stderr });
      },
    );
  });
}

/** Checks each line a child writes to `stream` as a log line (log-lines.ts), as it comes. */
export function checkLogStream(stream: Readable, where: string): void {
  let buffer = '';
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const nl = buffer.lastIndexOf('\n');
    if (nl === -1) return;
    checkLogText(buffer.slice(0, nl), where);
    buffer = buffer.slice(nl + 1);
  });
}

/** `serve` flags for a replica on a test's Redis under `prefix`, with a 300 ms command timeout (an outage shows at once). */
export function redisReplicaFlags(redis: { url: string }, prefix: string): string[] {
  return ['--registration-storage=redis', `--redis-url=${redis.url}`, `--redis-prefix=${prefix}`, '--redis-command-timeout-ms=300'];
}

/**
 * Start `poolscope serve` with `args` (plus `--listen 127.0.0.1:<free port>` unless given) and wait
 * until /healthz answers. `via` picks how: `npm start -- <args>` as README says, or `node bin/poolscope.js serve`.
 */
export async function startPoolscope(
  args: string[],
  options: { env?: Record<string, string>; via?: 'npm-start' | 'node'; port?: number; nodeArgs?: string[] } = {},
): Promise<PoolscopeProcess> {
  const port = options.port ?? (await freePort());
  const fullArgs = args.some((a) => a.startsWith('--listen')) ? args : [...args, `--listen=127.0.0.1:${port}`];
  const [command, argv] =
    options.via === 'npm-start'
      ? ['npm', ['start', '--silent', '--', ...fullArgs]]
      : [process.execPath, [...(options.nodeArgs ?? []), 'bin/poolscope.js', 'serve', ...fullArgs]];
  // Its own process group: `npx` runs the server as a grandchild, and signals must reach it too.
  const child = spawn(command, argv, {
    cwd: REPO_ROOT,
    env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'debug', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  const killOnExit = () => signalGroup('SIGKILL');
  process.once('exit', killOnExit);
  const logs: Record<string, unknown>[] = [];
  let stdoutBuffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdoutBuffer += chunk.toString();
    let nl: number;
    while ((nl = stdoutBuffer.indexOf('\n')) >= 0) {
      const line = stdoutBuffer.slice(0, nl);
      stdoutBuffer = stdoutBuffer.slice(nl + 1);
      checkLogLine(line, 'poolscope serve stdout');
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ unparsed: line });
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      process.off('exit', killOnExit);
      resolve(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  let gone = false;
  void exited.then(() => (gone = true));
  try {
    // Serving is enough (a replica whose store is down answers /healthz with 503).
    await waitFor(async () => !gone && (await fetch(`${url}/healthz`)).status > 0, {
      timeoutMs: 15_000,
      message: `poolscope on ${url}`,
    });
  } catch (error) {
    signalGroup('SIGKILL');
    throw new Error(`${(error as Error).message}; stderr: ${stderr}`);
  }
  return {
    child,
    url,
    port,
    logs,
    stderr: () => stderr,
    exited,
    async stop(signal = 'SIGTERM') {
      if (!gone) signalGroup(signal);
      const code = await exited;
      signalGroup('SIGKILL'); // anything the command left behind in its group
      return code;
    },
  };
}
