// The renewal window on the Redis store itself (docs/contract.md §9), for every kind of outage, with real
// redis-server processes: a writer (the home region's store) keeps renewing one pool through the outage
// (its heartbeats fail meanwhile) while another pool's relay stopped just before it. The outage is
// recorded by the writer that lived through it, on Redis's clock; the renewed pool's lease, run out on
// Redis's clock during the outage, is never lapsed; the dead pool is lapsed no sooner than the window's end
// and within a sweep of it; a reader started in the window reads both pools.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisReader, createRedisRouterStore, createRedisStore } from '../../src/store/redis/index.js';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import type { LeaseReader, RegistrationStore } from '../../src/store/types.js';
import { silentLogger } from '../support/logs.js';
import { randomPrefix, startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startSentinelGroup, type SentinelGroup } from '../support/redis-sentinel.js';
import { registration } from '../support/registration.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { repeatEvery, waitFor } from '../support/wait.js';

const LEASE_MS = 1500;
const HEARTBEAT_INTERVAL_MS = 500;
const COMMAND_TIMEOUT_MS = 300;
/** Heartbeat interval + command timeout. */
const WINDOW_MS = HEARTBEAT_INTERVAL_MS + COMMAND_TIMEOUT_MS;
/** The writer sweeps this often (the feed's default interval is 250 ms). */
const SWEEP_EVERY_MS = 50;
/** Scheduling slack on a loaded 2-core machine. */
const SLACK_MS = 500;
/** Longer than a lease: every deadline held before it runs out during it. */
const OUTAGE_MS = 2 * LEASE_MS;

interface Outage {
  /** The URL the store and readers use. */
  url: string;
  begin(): Promise<void> | void;
  /** Ends the outage; resolves once the store can be reached again. */
  end(): Promise<void>;
  /** A plain connection to whichever server is the master now (to read the log and the record). */
  inspect(): Promise<Redis>;
  stop(): Promise<void>;
}

const opened: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

async function frozen(): Promise<Outage> {
  const redis = await startPrivateRedis();
  return { url: redis.url, begin: () => redis.pause(), end: async () => redis.resume(), inspect: async () => new Redis(redis.url), stop: () => redis.stop() };
}

async function killedWithAof(): Promise<Outage> {
  const redis: PrivateRedis = await startPrivateRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
  return { url: redis.url, begin: () => redis.kill(), end: () => redis.restart(), inspect: async () => new Redis(redis.url), stop: () => redis.stop() };
}

async function pathCut(): Promise<Outage> {
  const redis = await startPrivateRedis();
  const proxy: TcpProxy = await startTcpProxy({ target: { host: '127.0.0.1', port: redis.port } });
  return {
    url: `redis://127.0.0.1:${proxy.port}`,
    // Bytes held both ways, sockets open: the writer's commands time out, as across a cut WAN path.
    begin: () => proxy.hold(),
    end: async () => proxy.release(),
    inspect: async () => new Redis(redis.url),
    stop: async () => {
      await proxy.close();
      await redis.stop();
    },
  };
}

async function sentinelFailover(): Promise<Outage> {
  const group: SentinelGroup = await startSentinelGroup({ downAfterMs: 1000 });
  const first = group.master.port;
  return {
    url: group.url,
    // The master freezes once its replica has every write; the sentinels promote the replica, which holds
    // the replicated deadlines and stamp.
    begin: async () => {
      const master = new Redis(group.master.url);
      try {
        await master.call('WAIT', 1, 2000);
      } finally {
        master.disconnect();
      }
      group.master.pause();
    },
    end: async () => {
      await waitFor(async () => (await group.masterPort()) !== first, { timeoutMs: 60_000, intervalMs: 25, message: 'the promotion' });
    },
    inspect: async () => new Redis({ host: '127.0.0.1', port: await group.masterPort() }),
    stop: () => group.stop(),
  };
}

const KINDS: [string, () => Promise<Outage>][] = [
  ['frozen (SIGSTOP)', frozen],
  ['killed and restarted with AOF', killedWithAof],
  ['path cut from the writer (bytes held)', pathCut],
  ['Sentinel failover from a frozen master', sentinelFailover],
];

function writer(url: string, prefix: string): RegistrationStore {
  const store = createRedisStore({
    url,
    prefix,
    leaseMs: LEASE_MS,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    logger: silentLogger(),
  });
  opened.push(() => store.close());
  return store;
}

function reader(url: string, prefix: string): LeaseReader {
  const store = createRedisReader({ url, prefix, leaseMs: LEASE_MS, commandTimeoutMs: COMMAND_TIMEOUT_MS, logger: silentLogger() });
  opened.push(() => store.close());
  return store;
}

/** Every change log entry: its Redis time (the id's ms), type and pool key. */
async function changeLog(redis: Redis, prefix: string): Promise<{ atMs: number; type: string; key: string }[]> {
  const entries = await redis.xrange(createStoreKeys(prefix).changes, '-', '+');
  return entries.map(([id, fields]) => {
    const field = (name: string) => fields[fields.indexOf(name) + 1]!;
    return { atMs: Number(id.split('-')[0]), type: field('type'), key: field('key') };
  });
}

const LIVE = registration({ name: 'renewed-through' });
const DEAD = registration({ name: 'relay-died' });
const key = (r: typeof LIVE) => `${r.cluster_id}/${r.namespace}/${r.name}`;

describe.each(KINDS)('the renewal window after an outage: %s', (_kind, make) => {
  it('never lapses the lease renewed through it; lapses the dead one at the window end, not before; a reader started in the window lists both', async () => {
    const outage = await make();
    opened.push(() => outage.stop());
    const prefix = randomPrefix('window');
    const store = writer(outage.url, prefix);
    await store.snapshot();
    await store.heartbeat(LIVE);
    await store.heartbeat(DEAD);
    const sweeps = repeatEvery(SWEEP_EVERY_MS, () => store.sweep());
    opened.push(() => sweeps.stop());
    const renewals = repeatEvery(HEARTBEAT_INTERVAL_MS, () => store.heartbeat(LIVE));
    opened.push(() => renewals.stop());

    // The dead pool's relay stops, then the outage begins: its deadline falls inside the outage.
    await store.heartbeat(DEAD);
    await outage.begin();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await outage.end();

    // A reader started now, in the window: once the writer's record is in, it reads both pools.
    const late = reader(outage.url, prefix);
    const reading = waitFor(
      async () => {
        const before = await late.renewalWindow!();
        if (!before.open) return false;
        const snapshot = await late.snapshot();
        const after = await late.renewalWindow!();
        return { snapshot, stillOpen: after.open };
      },
      { timeoutMs: 10_000, message: 'the outage recorded, its window open' },
    ).catch((error: unknown) => error as Error);

    const inspector = await outage.inspect();
    opened.push(() => inspector.disconnect());
    await waitFor(async () => (await changeLog(inspector, prefix)).some((e) => e.type === 'lapse' && e.key === key(DEAD)), {
      timeoutMs: 10_000,
      message: 'the dead pool lapsed',
    });
    const log = await changeLog(inspector, prefix);
    // The renewed pool never lapsed, though its deadline passed on Redis's clock during the outage.
    expect(log.filter((e) => e.key === key(LIVE) && e.type === 'lapse')).toEqual([]);

    // The writer recorded one outage on Redis's clock, with its window.
    const keys = createStoreKeys(prefix);
    const record = await inspector.zrange(keys.outages, '0', '-1');
    expect(record).toHaveLength(1);
    const [startMs, endMs, windowMs, covered] = record[0]!.split(':').map(Number) as [number, number, number, number];
    // The leases it held: the dead one, and the renewed one, even when its renewal ran first (on a cut
    // path the held bytes of a heartbeat sent during the cut reach Redis before the stamp).
    expect(covered).toBe(2);
    expect(windowMs).toBe(WINDOW_MS);
    expect(endMs - startMs).toBeGreaterThanOrEqual(OUTAGE_MS - SLACK_MS);

    // The dead pool: lapsed no sooner than the window's end, and within a sweep of it.
    const lapse = log.find((e) => e.type === 'lapse' && e.key === key(DEAD))!;
    expect(lapse.atMs).toBeGreaterThanOrEqual(endMs + WINDOW_MS);
    expect(lapse.atMs).toBeLessThanOrEqual(endMs + WINDOW_MS + SWEEP_EVERY_MS + SLACK_MS);

    // The reader started in the window read both (a snapshot read while the window was open).
    const inWindow = await reading;
    if (inWindow instanceof Error) throw inWindow;
    expect(inWindow.stillOpen).toBe(true);
    expect(inWindow.snapshot.records.map((r) => r.key).sort()).toEqual([key(DEAD), key(LIVE)].sort());
  });
});

describe('the renewal window after an outage: one record for pools and routers', () => {
  it("counts the pools' leases when the routers' writer records the outage first (and the routers' when the pools' does)", async () => {
    for (const first of ['routers', 'pools'] as const) {
      const redis = await startPrivateRedis();
      opened.push(() => redis.stop());
      const prefix = randomPrefix('window');
      const options = { url: redis.url, prefix, leaseMs: LEASE_MS, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, commandTimeoutMs: COMMAND_TIMEOUT_MS, logger: silentLogger() };
      // One replica's two writers of the same Redis: its pool leases and its router leases.
      const pools = createRedisStore(options);
      const routers = createRedisRouterStore(options);
      opened.push(() => pools.close(), () => routers.close());
      await pools.snapshot();
      await routers.snapshot();
      await pools.heartbeat(DEAD);
      await routers.heartbeat({ id: 'router-1', url: 'http://127.0.0.1:9100' });
      redis.pause();
      // Each writer's commands fail during the outage, as its sweeps' would.
      const failing = await Promise.allSettled([pools.sweep(), routers.sweep()]);
      expect(failing.map((result) => result.status)).toEqual(['rejected', 'rejected']);
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      redis.resume();
      // The first writer through records the outage (its snapshot stamps first); the other gets through after.
      const recorder = first === 'routers' ? routers : pools;
      await waitFor(() => recorder.snapshot().then(() => true, () => false), { timeoutMs: 10_000, message: `${first}: stamped again` });
      const inspector = new Redis(redis.url);
      opened.push(() => inspector.disconnect());
      const [record] = await inspector.zrange(createStoreKeys(prefix).outages, '0', '-1');
      const covered = Number(record!.split(':')[3]);
      // Both deadlines fell in the outage: the dead pool's and the router's, whichever writer recorded it.
      expect({ first, covered }).toEqual({ first, covered: 2 });
    }
  });
});

describe('the renewal window after an outage: a renewal that reaches Redis before the record', () => {
  // When Redis answers again, a heartbeat sent during the outage (or just after) may run before any writer
  // stamps: its lease, run out in the outage, goes on, held by the stale stamp. The outage's record must
  // still count it among the leases the outage held, once, however often it was renewed meanwhile.
  it.each([
    ['renewed once', 1],
    ['renewed twice, the first renewal due within the window by the time of the record', 2],
  ])('counts the renewed lease with the dead one: %s', async (_case, renewals) => {
    const redis = await startPrivateRedis();
    opened.push(() => redis.stop());
    const prefix = randomPrefix('window');
    const store = writer(redis.url, prefix);
    await store.snapshot();
    await store.heartbeat(LIVE);
    await store.heartbeat(DEAD);
    redis.pause();
    // The writer's commands fail during the outage: it lived through it.
    await expect(store.sweep()).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    redis.resume();
    // No stamp yet (no sweep, no snapshot): the renewals run first.
    await waitFor(() => store.heartbeat(LIVE).then(() => true, () => false), { timeoutMs: 10_000, message: 'a renewal through' });
    for (let renewal = 1; renewal < renewals; renewal++) {
      // Long enough that the first renewal's deadline falls within the window of a record made now.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS - WINDOW_MS + 100));
      await store.heartbeat(LIVE);
    }
    await store.sweep();
    const inspector = new Redis(redis.url);
    opened.push(() => inspector.disconnect());
    const record = await inspector.zrange(createStoreKeys(prefix).outages, '0', '-1');
    expect(record).toHaveLength(1);
    expect(Number(record[0]!.split(':')[3])).toBe(2);
  });
});
