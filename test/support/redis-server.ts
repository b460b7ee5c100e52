// redis-server processes for tests. startPrivateRedis(): a redis-server of its own on a free 127.0.0.1
// port, which a test may stop, kill, restart on the same port, pause and resume; a test file takes one
// through `useRedis()` (use-redis.ts), and the benchmarks call it directly. startRedis(): a server named
// by REDIS_URL, else a private one. With TEST_REDIS=container every private Redis is a container
// (redis-container.ts) that behaves the same. Tests keep apart by key prefix
// (randomPrefix()), never by sharing data.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait.js';

export interface SharedRedis {
  url: string;
  stop(): Promise<void>;
}

export interface PrivateRedis extends SharedRedis {
  readonly port: number;
  /** SIGTERM, wait for exit, remove its directory. */
  stop(): Promise<void>;
  /** SIGKILL (no shutdown), wait for exit. Its data is gone (no persistence). */
  kill(): Promise<void>;
  /** Start again on the same port, empty; waits until it answers PING. */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing answers. */
  pause(): void;
  /** SIGCONT */
  resume(): void;
}

export interface StartPrivateRedisOptions {
  /** Default: a free port. */
  port?: number;
  /** More redis-server arguments (e.g. cluster mode). */
  args?: string[];
  /** More environment for the process (e.g. a clock shim: shifted-redis.ts). */
  env?: Record<string, string>;
  /**
   * Host folders the server reads (the clock shim and its offset file): a process sees them anyway; a
   * container (TEST_REDIS=container) gets each mounted read-only at the same path.
   */
  shared?: string[];
}

export function randomPrefix(label = 'test'): string {
  return `${label}-${randomBytes(6).toString('hex')}`;
}

export async function startRedis(): Promise<SharedRedis> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) return { url: fromEnv, stop: async () => {} };
  return startPrivateRedis();
}

export async function startPrivateRedis(options: StartPrivateRedisOptions = {}): Promise<PrivateRedis> {
  if (process.env.TEST_REDIS === 'container') {
    const { startRedisContainer } = await import('./redis-container.js');
    return startRedisContainer(options);
  }
  const port = options.port ?? (await freePort());
  const dir = await mkdtemp(join(tmpdir(), 'poolscope-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...(options.args ?? [])];
  let child: ChildProcess | undefined;
  let output = '';
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);

  const launch = async () => {
    output = '';
    const env = options.env ? { ...process.env, ...options.env } : undefined;
    const started = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    child = started;
    try {
      await waitForPing(port, started);
    } catch (error) {
      started.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not start: ${String(error)}\n${output}`);
    }
  };
  const exited = async (signal: NodeJS.Signals) => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const done = new Promise((resolve) => running.once('exit', resolve));
    if (signal !== 'SIGKILL') running.kill('SIGCONT');
    running.kill(signal);
    await done;
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await exited('SIGTERM');
      process.off('exit', killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
    kill: () => exited('SIGKILL'),
    async restart() {
      await exited('SIGKILL');
      await launch();
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}

/** A port nothing listens on right now (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls PING until +PONG (15–30 ms for a fresh server), at most 5 s; fails at once if the process exits. */
export async function waitForPing(port: number, child: ChildProcess): Promise<void> {
  const outcome = await waitFor(async () => (child.exitCode !== null ? 'exited' : (await pings(port)) && 'pong'), {
    timeoutMs: 5000,
    message: `PONG on port ${port}`,
  });
  if (outcome === 'exited') throw new Error(`exited with ${child.exitCode}`);
}

/** Polls PING until +PONG, at most 10 s (a Redis this process did not start: a container's). */
export async function waitForPong(port: number): Promise<void> {
  await waitFor(async () => pings(port), { timeoutMs: 10_000, message: `PONG on port ${port}` });
}

function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let reply = '';
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}
