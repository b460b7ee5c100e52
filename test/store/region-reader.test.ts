// The read-only reader a replica uses for every region but its own (docs/design.md "Scale and regions"):
// it works on a read-only replica (`--replicaof`) of the region's Redis without a single refused write,
// never writes anything, treats a replica cut off from its master as unreadable, and, across a WAN path
// (a TCP proxy here), notices a path that holds every byte within the command timeout + 250 ms, comes
// back once the path does, and gets a change no sooner than the path delivers it.
import { Redis } from 'ioredis';
import { silentLogger } from '../support/logs.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisReader, createRedisStore } from '../../src/store/redis/index.js';
import { DUE_LAPSES_PAGE, readDueLapses } from '../../src/store/redis/due-lapses.js';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import { ReaderContinuity, windowTiming } from '../../src/store/redis/renewal-window.js';
import { ReplicaLink } from '../../src/store/redis/replica-link.js';
import { defineReadScripts } from '../../src/store/redis/scripts.js';
import { openRedisSession } from '../../src/store/redis/session.js';
import { UNWRITTEN_EPOCH } from '../../src/store/redis/snapshot.js';
import type { LeaseReader, RegistrationStore } from '../../src/store/types.js';
import { StoreUnavailableError } from '../../src/store/types.js';
import { randomPrefix, startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { eventually, keyOf, registration, WatchRecorder } from './contract-support.js';

const logger = silentLogger();
const SHORT_LEASE_MS = 300;
const LONG_LEASE_MS = 60_000;
/** The command timeout of the reader across the proxy; the design allows 250 ms more to notice a hold. */
const WAN_TIMEOUT_MS = 500;
const HOLD_ALLOWANCE_MS = 250;

let master: PrivateRedis;
let replica: PrivateRedis;
let onMaster: Redis;
let onReplica: Redis;

/** A replica that has its master's data: ROLE says `connected`. */
async function startReplicaOf(of: PrivateRedis): Promise<PrivateRedis> {
  const started = await startPrivateRedis({ args: ['--replicaof', '127.0.0.1', String(of.port)] });
  const probe = new Redis(started.url);
  try {
    await eventually(async () => ((await probe.role()) as unknown[])[3] === 'connected', { what: 'the replica to sync', timeoutMs: 10_000 });
  } finally {
    probe.disconnect();
  }
  return started;
}

/**
 * Masters here start a full sync at once (Redis 7.0 waits 5 s for more replicas by default), and ping their
 * replicas every second, as docs/operations.md asks of a master whose replicas serve followers: a replica
 * is read only while it heard from its master within the writers' stale bound.
 */
const startMaster = () => startPrivateRedis({ args: ['--repl-diskless-sync-delay', '0', '--repl-ping-replica-period', '1'] });

beforeAll(async () => {
  master = await startMaster();
  replica = await startReplicaOf(master);
  onMaster = new Redis(master.url);
  onReplica = new Redis(replica.url);
});
afterAll(async () => {
  onMaster?.disconnect();
  onReplica?.disconnect();
  await replica?.stop();
  await master?.stop();
});

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

function openStore(url: string, prefix: string, leaseMs: number): RegistrationStore {
  const store = createRedisStore({ url, prefix, leaseMs, commandTimeoutMs: 1000, logger });
  opened.push(store);
  return store;
}
function openReader(url: string, prefix: string, commandTimeoutMs = 1000): LeaseReader {
  const reader = createRedisReader({ url, prefix, commandTimeoutMs, logger });
  opened.push(reader);
  return reader;
}
function follow(reader: LeaseReader, position: string): WatchRecorder {
  const recorder = new WatchRecorder(reader, position);
  opened.push({ close: () => recorder.stop() });
  return recorder;
}

/** How many commands a Redis refused as READONLY since it started. */
async function readonlyRefusals(redis: Redis): Promise<number> {
  const stats = await redis.info('errorstats');
  return Number(/errorstat_READONLY:count=(\d+)/.exec(stats)?.[1] ?? 0);
}

async function timed<T>(promise: Promise<T>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await promise;
    return { error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

describe('region reader on a read-only replica', () => {
  it('reads snapshots, follows the log and lists due lapses, with no write refused', async () => {
    const prefix = randomPrefix('region');
    const refusedBefore = await readonlyRefusals(onReplica);
    const reader = openReader(replica.url, prefix);
    const [long, short] = [openStore(master.url, prefix, LONG_LEASE_MS), openStore(master.url, prefix, SHORT_LEASE_MS)];

    // Nothing written there yet, the epoch key included.
    const empty = await reader.snapshot();
    expect(empty.records).toEqual([]);
    expect(empty.epoch).toBe(UNWRITTEN_EPOCH);

    const first = registration('replicated');
    await long.heartbeat(first);
    const home = await long.snapshot();
    const snapshot = await eventually(
      async () => {
        const read = await reader.snapshot();
        return read.records.length === 1 && read.epoch === home.epoch && read;
      },
      { what: 'the lease and the epoch to reach the replica' },
    );
    expect(snapshot.records[0]).toMatchObject({ key: keyOf(first), registration: first, version: 1 });

    // An upsert written on the master arrives through replication.
    const recorder = follow(reader, snapshot.position);
    const second = registration('followed');
    await long.heartbeat(second);
    const [event] = await recorder.untilUpsertOf(keyOf(second));
    expect(event).toMatchObject({ type: 'upsert', record: { key: keyOf(second), registration: second } });

    // A lease that runs out on the master is due on the replica, with its deadline, and nothing is logged.
    const lapsing = registration('lapsing');
    await short.heartbeat(lapsing);
    const deadline = Number(await onMaster.zscore(createStoreKeys(prefix).deadlines, keyOf(lapsing)));
    const due = await eventually(
      async () => {
        const lapses = await reader.dueLapses();
        return lapses.length > 0 && lapses;
      },
      { what: 'the due lease', timeoutMs: SHORT_LEASE_MS + 2000 },
    );
    expect(due).toEqual([{ key: keyOf(lapsing), atMs: deadline }]);
    expect((await reader.snapshot()).records.map((r) => r.key).sort()).toEqual([keyOf(second), keyOf(first)].sort());
    const marker = registration('marker');
    await long.heartbeat(marker);
    const events = await recorder.untilUpsertOf(keyOf(marker));
    expect(events.map((e) => e.type)).toEqual(['upsert', 'upsert', 'upsert']);

    expect(await readonlyRefusals(onReplica)).toBe(refusedBefore);
  });

  it('writes nothing, not even the epoch, and has nothing to write with', async () => {
    const prefix = randomPrefix('untouched');
    // On the master, where a write would succeed.
    const reader = openReader(master.url, prefix);
    expect('heartbeat' in reader || 'sweep' in reader).toBe(false);
    const { position, epoch } = await reader.snapshot();
    expect(epoch).toBe(UNWRITTEN_EPOCH);
    expect(await reader.dueLapses(0)).toEqual([]);
    const recorder = follow(reader, position);
    // The watch's connection a second old: its XREAD has come back empty a few times (a window is 150 ms).
    const watchAgeSecs = async () => {
      const line = String(await onMaster.call('CLIENT', 'LIST')).split('\n').find((l) => l.includes('name=poolscope:changes'));
      return Number(/ age=(\d+)/.exec(line ?? '')?.[1] ?? -1);
    };
    await eventually(async () => (await watchAgeSecs()) >= 1, { what: 'the watch to idle', timeoutMs: 3000 });
    await recorder.stop();
    expect(recorder.error).toBeUndefined();
    expect(await onMaster.keys(`{${prefix}}*`)).toEqual([]);
  });

  it('pages through due lapses that share a deadline, each listed once', async () => {
    const prefix = randomPrefix('pages');
    const keys = createStoreKeys(prefix);
    const past = Date.now() - 60_000;
    const members = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    // Two runs of equal deadlines, longer than a page, and one lease not due.
    await onMaster.zadd(keys.deadlines, past, 'a', past, 'b', past, 'c', past + 1, 'd', past + 1, 'e', past + 1, 'f', past + 2, 'g');
    await onMaster.zadd(keys.deadlines, Date.now() + 60_000, 'later');
    // The region's writers stamp (stamp-5.lua): a stamp that is current throughout the test.
    await onMaster.set(keys.stamp, Date.now() + 60_000);
    const session = openRedisSession({
      url: replica.url,
      prefix,
      commandTimeoutMs: 1000,
      logger,
      connectionName: 'poolscope:test',
      autoPipelining: false,
      defineScripts: defineReadScripts,
    });
    opened.push({ close: async () => session.client.disconnect() });
    const read = (pageSize: number, graceMs = 0) =>
      readDueLapses({
        runner: session.runner,
        keys: session.keys,
        replicaLink: new ReplicaLink(windowTiming(1000, 15_000).staleMs),
        continuity: new ReaderContinuity(windowTiming(1000, 15_000)),
        graceMs,
        pageSize,
      });
    const expected = members.map((key, i) => ({ key, atMs: past + (i < 3 ? 0 : i < 6 ? 1 : 2) }));
    await eventually(async () => (await onReplica.zcard(keys.deadlines)) === 8, { what: 'replication' });
    for (const pageSize of [1, 2, 3, 4, 7, DUE_LAPSES_PAGE]) expect(await read(pageSize), `pages of ${pageSize}`).toEqual(expected);
    expect(await read(2, 30_000)).toEqual(expected);
    expect(await read(2, 120_000)).toEqual([]);
  });

  it('refuses to read a replica that lost its master, then reads it again', async () => {
    const ownMaster = await startMaster();
    const ownReplica = await startReplicaOf(ownMaster);
    try {
      const prefix = randomPrefix('stale');
      const reader = openReader(ownReplica.url, prefix);
      await reader.snapshot();
      await ownMaster.kill();
      // Its data would only grow staler while its clock runs on: every lease would seem to lapse.
      await eventually(async () => ((await reader.dueLapses().catch((error: unknown) => error)) as unknown) instanceof StoreUnavailableError, {
        what: 'the replica to be refused',
      });
      await expect(reader.snapshot()).rejects.toThrow(/link to its master/);

      await ownMaster.restart();
      await eventually(() => reader.dueLapses().then(() => true, () => false), { what: 'the replica to resync', timeoutMs: 10_000 });
    } finally {
      await ownReplica.stop();
      await ownMaster.stop();
    }
  });
});

describe('region reader across a WAN path', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: master.port } });
  });
  afterEach(() => {
    proxy.release();
    proxy.setDelay(0);
  });
  afterAll(async () => {
    await proxy?.close();
  });
  const wanUrl = () => `redis://127.0.0.1:${proxy.port}`;

  it(`notices a path that holds every byte within the command timeout + ${HOLD_ALLOWANCE_MS} ms, and recovers on release`, async () => {
    const prefix = randomPrefix('held');
    const store = openStore(master.url, prefix, LONG_LEASE_MS);
    const reader = openReader(wanUrl(), prefix, WAN_TIMEOUT_MS);
    const recorder = follow(reader, (await reader.snapshot()).position);
    const before = registration('before');
    await store.heartbeat(before);
    await recorder.untilUpsertOf(keyOf(before));
    // The watch is blocked in XREAD now, or between two windows.

    proxy.hold();
    const heldAt = performance.now();
    const watchEnded = recorder.done.then(() => performance.now() - heldAt);
    const calls = await Promise.all([timed(reader.snapshot()), timed(reader.dueLapses())]);
    for (const { error, ms } of calls) {
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeLessThanOrEqual(WAN_TIMEOUT_MS + HOLD_ALLOWANCE_MS);
    }
    expect(await watchEnded).toBeLessThanOrEqual(WAN_TIMEOUT_MS + HOLD_ALLOWANCE_MS);
    expect(recorder.error).toBeInstanceOf(StoreUnavailableError);

    proxy.release();
    const again = await eventually(() => reader.snapshot().catch(() => undefined), { what: 'a snapshot after the release', timeoutMs: 10_000 });
    expect(again.records.map((r) => r.key)).toEqual([keyOf(before)]);
    const resumed = follow(reader, again.position);
    const after = registration('after');
    await store.heartbeat(after);
    await resumed.untilUpsertOf(keyOf(after));
  });

  it('recovers after the connections of the moment are dropped', async () => {
    const prefix = randomPrefix('reset');
    const store = openStore(master.url, prefix, LONG_LEASE_MS);
    const reader = openReader(wanUrl(), prefix, WAN_TIMEOUT_MS);
    const recorder = follow(reader, (await reader.snapshot()).position);
    // Once a change has come through, the watch's own connection is open: the reset drops it too.
    const before = registration('before-reset');
    await store.heartbeat(before);
    await recorder.untilUpsertOf(keyOf(before));
    await reader.dueLapses();

    proxy.reset();
    await recorder.done;
    expect(recorder.error).toBeInstanceOf(StoreUnavailableError);
    const again = await eventually(() => reader.snapshot().catch(() => undefined), { what: 'a snapshot after the reset', timeoutMs: 10_000 });
    const resumed = follow(reader, again.position);
    const after = registration('after-reset');
    await store.heartbeat(after);
    await resumed.untilUpsertOf(keyOf(after));
    expect(await reader.dueLapses()).toEqual([]);
  });

  it('reads a snapshot of 12,000 pools in three round trips: its steps are pipelined', async () => {
    const delayMs = 400;
    const prefix = randomPrefix('pipelined');
    const store = openStore(master.url, prefix, LONG_LEASE_MS);
    for (let i = 0; i < 12_000; i += 1000) {
      await Promise.all(Array.from({ length: 1000 }, (_, j) => store.heartbeat(registration(`bulk-${i + j}`))));
    }
    proxy.setDelay(delayMs);
    const reader = openReader(wanUrl(), prefix, 10_000);
    // The first read also opens the connection and loads the read scripts.
    await reader.snapshot();
    const started = performance.now();
    const snapshot = await reader.snapshot();
    const roundTrips = (performance.now() - started) / (2 * delayMs);
    expect(snapshot.records).toHaveLength(12_000);
    // Two ZSCAN steps (10,000 and 2,000 members), 12 read scripts: the position with the first step, the
    // second step with the first step's reads, its reads with the position after, the clock and the
    // epoch. One more round trip anywhere (a step waiting for its reads, reads one after another, the
    // epoch on its own) makes four. (Not 3 exactly: a delay timer may fire a fraction of a ms early.)
    expect(roundTrips).toBeGreaterThan(2.5);
    expect(roundTrips).toBeLessThan(4);
  });

  it('gets a change no sooner than the path delivers it, and without a poll delay', async () => {
    const delayMs = 150;
    proxy.setDelay(delayMs);
    const prefix = randomPrefix('delayed');
    const store = openStore(master.url, prefix, LONG_LEASE_MS);
    // The round trip (2 × 150 ms) stays well under the command timeout.
    const reader = openReader(wanUrl(), prefix, 1000);
    const recorder = follow(reader, (await reader.snapshot()).position);
    // Two changes first: the follow's blocking connection takes a few delayed round trips to open, and
    // its queue of XREADs one more to reach Redis; a change before then is read by the script instead.
    for (const name of ['warm-1', 'warm-2']) {
      const warm = registration(name);
      await store.heartbeat(warm);
      await recorder.untilUpsertOf(keyOf(warm));
    }

    for (const name of ['first', 'second']) {
      const reg = registration(name);
      const sentAt = performance.now();
      await store.heartbeat(reg);
      await recorder.untilUpsertOf(keyOf(reg));
      const ms = performance.now() - sentAt;
      // At least one way; at most a few round trips even on a loaded machine, never a poll period (how
      // soon exactly, one way, is measured by the regions benchmark).
      expect(ms).toBeGreaterThanOrEqual(delayMs);
      expect(ms).toBeLessThan(8 * delayMs + 300);
    }
  });
});
