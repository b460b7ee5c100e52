// Redis Sentinel for tests. startRedisSentinel(): one sentinel watching a private redis-server as master
// `mymaster`, for the redis+sentinel:// URL form end to end. startSentinelGroup(): a master, a replica of
// it and three sentinels (quorum 2) that fail over within about a second of the master going silent,
// for failover tests; the master can be frozen (SIGSTOP) and the sentinels asked who the master is.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startPrivateRedis, waitForPing, type PrivateRedis } from './redis-server.js';
import { waitFor } from './wait.js';

export interface LocalRedisSentinel {
  /** redis+sentinel://127.0.0.1:<sentinel port>/mymaster */
  url: string;
  master: PrivateRedis;
  stop(): Promise<void>;
}

export async function startRedisSentinel(): Promise<LocalRedisSentinel> {
  const master = await startPrivateRedis();
  const dir = await mkdtemp(join(tmpdir(), 'poolscope-sentinel-'));
  let sentinel: ChildProcess | undefined;
  const killOnExit = () => sentinel?.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    const running = sentinel;
    if (running && running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      await exited;
    }
    process.off('exit', killOnExit);
    await master.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const config = join(dir, 'sentinel.conf');
    // Sentinel rewrites its configuration file, so it gets a file of its own.
    await writeFile(
      config,
      [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor mymaster 127.0.0.1 ${master.port} 1`, ''].join('\n'),
    );
    sentinel = spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' });
    await waitForPing(port, sentinel);
    return { url: `redis+sentinel://127.0.0.1:${port}/mymaster`, master, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface SentinelGroup {
  /** redis+sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,127.0.0.1:<s3>/mymaster */
  url: string;
  /** The master the group started with, and its replica (the one Sentinel promotes). */
  master: PrivateRedis;
  replica: PrivateRedis;
  /** The master's port as the first sentinel that answers names it. */
  masterPort(): Promise<number>;
  stop(): Promise<void>;
}

export interface SentinelGroupOptions {
  /** How long the master may be silent before the sentinels call it down (default 1000 ms). */
  downAfterMs?: number;
}

/** A master, its replica and three sentinels, every one on a free 127.0.0.1 port. */
export async function startSentinelGroup(options: SentinelGroupOptions = {}): Promise<SentinelGroup> {
  const downAfterMs = options.downAfterMs ?? 1000;
  // No 5 s wait before a full sync to the replica (Redis 7's diskless default).
  const master = await startPrivateRedis({ args: ['--repl-diskless-sync-delay', '0'] });
  const started: PrivateRedis[] = [master];
  const sentinels: ChildProcess[] = [];
  const dirs: string[] = [];
  const killOnExit = () => {
    for (const sentinel of sentinels) sentinel.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const ports: number[] = [];
  const stop = async () => {
    await Promise.all(
      sentinels.map(async (sentinel) => {
        if (sentinel.exitCode !== null || sentinel.signalCode !== null) return;
        const exited = new Promise((resolve) => sentinel.once('exit', resolve));
        sentinel.kill('SIGTERM');
        await exited;
      }),
    );
    process.off('exit', killOnExit);
    // A frozen server is thawed by its stop() before it is stopped.
    await Promise.all(started.map((server) => server.stop()));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  };
  const askSentinels = async (): Promise<number> => {
    for (const port of ports) {
      const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, commandTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => {});
      try {
        const reply = (await client.call('SENTINEL', 'get-master-addr-by-name', 'mymaster')) as [string, string] | null;
        if (reply) return Number(reply[1]);
      } catch {
        // the next sentinel
      } finally {
        client.disconnect();
      }
    }
    throw new Error('no sentinel named the master');
  };
  try {
    const replica = await startPrivateRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
    started.push(replica);
    // The replica is in sync before anything depends on it.
    await waitFor(async () => (await infoField(replica.port, 'master_link_status')) === 'up', { timeoutMs: 15_000, message: 'the replica in sync' });
    for (let i = 0; i < 3; i += 1) {
      const dir = await mkdtemp(join(tmpdir(), 'poolscope-sentinel-'));
      dirs.push(dir);
      const port = await freePort();
      ports.push(port);
      const config = join(dir, 'sentinel.conf');
      await writeFile(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor mymaster 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds mymaster ${downAfterMs}`,
          'sentinel failover-timeout mymaster 10000',
          'sentinel parallel-syncs mymaster 1',
          '',
        ].join('\n'),
      );
      const sentinel = spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' });
      sentinels.push(sentinel);
      await waitForPing(port, sentinel);
    }
    // Every sentinel knows the other two and the replica before a failover is asked of them.
    await waitFor(
      async () => {
        for (const port of ports) {
          const [sentinelsKnown, replicasKnown] = await sentinelCounts(port);
          if (sentinelsKnown < 2 || replicasKnown < 1) return false;
        }
        return true;
      },
      { timeoutMs: 15_000, intervalMs: 100, message: 'the sentinels to find each other and the replica' },
    );
    const url = `redis+sentinel://${ports.map((port) => `127.0.0.1:${port}`).join(',')}/mymaster`;
    return { url, master, replica, masterPort: askSentinels, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One field of INFO replication on a server. */
async function infoField(port: number, field: string): Promise<string | undefined> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, commandTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    const info = await client.info('replication');
    return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  } finally {
    client.disconnect();
  }
}

/** How many other sentinels and how many replicas a sentinel knows for mymaster. */
async function sentinelCounts(port: number): Promise<[number, number]> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, commandTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    const master = (await client.call('SENTINEL', 'master', 'mymaster')) as string[];
    const field = (name: string) => Number(master[master.indexOf(name) + 1]);
    return [field('num-other-sentinels'), field('num-slaves')];
  } finally {
    client.disconnect();
  }
}
