// Redis in a container (testcontainers' GenericContainer), for TEST_REDIS=container: the image's
// redis-server on a free 127.0.0.1 port in host network mode (the engine has no bridge, so nothing is
// published), ready when Redis logs "Ready to accept connections". It can be killed, restarted on the
// same port (empty), paused and resumed, as a redis-server process can (redis-server.ts).
import { execFileSync } from 'node:child_process';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { docker, DOCKER, REDIS_IMAGE } from './docker.js';
import { freePort, waitForPong, type PrivateRedis, type StartPrivateRedisOptions } from './redis-server.js';

// The reaper (Ryuk) is an image of its own from a registry this machine cannot reach; each test stops
// what it started, and the suite's containers are named poolscope-test-* for a manual clean-up.
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
// Without a bridge network, testcontainers' own look-up of the host (the bridge's gateway) fails with
// "Could not find a working container runtime strategy"; on the host network the host is loopback.
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';

export async function startRedisContainer(options: StartPrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = options.port ?? (await freePort());
  const command = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(options.args ?? [])];
  const container: StartedTestContainer = await new GenericContainer(REDIS_IMAGE)
    .withNetworkMode('host')
    .withCommand(command)
    // The process's environment and the host folders it reads, as a redis-server process would have them
    // (the clock shim: LD_PRELOAD names a file under one of them).
    .withEnvironment(options.env ?? {})
    .withBindMounts((options.shared ?? []).map((path) => ({ source: path, target: path, mode: 'ro' as const })))
    .withName(`poolscope-test-redis-${port}-${Date.now()}`)
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
    .withStartupTimeout(30_000)
    .start();
  const id = container.getId();
  let removed = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (removed) return;
      removed = true;
      await container.stop({ timeout: 0 });
    },
    // SIGKILL to redis-server, PID 1 of its container; the container stays, stopped, for restart().
    kill: async () => void (await docker(['kill', id]).catch(() => '')),
    // The same container again (its files too, as a process's directory is kept): an append-only file
    // written before the kill is read back; without one it starts empty.
    async restart() {
      await docker(['kill', id]).catch(() => '');
      await docker(['start', id]);
      await waitForPong(port);
    },
    // Synchronous, as SIGSTOP/SIGCONT are for a process: frozen (cgroup freezer) when pause() returns.
    pause: () => void execFileSync(DOCKER, ['pause', id], { stdio: 'ignore' }),
    // A second resume, as a second SIGCONT, does nothing.
    resume: () => {
      try {
        execFileSync(DOCKER, ['unpause', id], { stdio: 'ignore' });
      } catch {
        // not paused
      }
    },
  };
}
