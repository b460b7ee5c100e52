// One region's feed on its own (docs/contract.md §7, docs/design.md "Scale and regions"), over a real
// memory store behind a DelegatingStore that can be cut off: a followed region that cannot be read is held
// for `holdMs`, then dropped through the sink, its entry marked dropped once the drop went through; read
// again, it is whole again; a drop that fails is logged, never left unhandled; the home region is never
// dropped; a store that lost its data is refilled for one lease.
import { afterEach, describe, expect, it } from 'vitest';
import { RegionFeed, type RegionFeedSink } from '../../src/join/region-feed.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { UNWRITTEN_EPOCH } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually, throughout } from '../support/wait.js';

const HOLD_MS = 150;
const feeds: RegionFeed[] = [];
afterEach(async () => {
  for (const feed of feeds.splice(0)) await feed.stop();
});

/** A sink that records what the feed tells it; `drop` answers what the test says. */
function recordingSink(drop: (region: string) => boolean | Promise<boolean> = () => true) {
  const calls: string[] = [];
  const sink: RegionFeedSink = {
    snapshot: (region, snapshot, holdMissing) => void calls.push(`snapshot ${region} ${snapshot.records.length} ${holdMissing}`),
    event: (region, event) => void calls.push(`event ${region} ${event.type}`),
    due: () => {},
    status: (region) => void calls.push(`status ${region}`),
    drop: (region) => {
      calls.push(`drop ${region}`);
      return drop(region);
    },
  };
  return { sink, calls };
}

/** A store whose snapshots can be made to carry another epoch, as a Redis that lost its data does. */
const EpochStore = DelegatingStore;

interface FeedOptions {
  home?: boolean;
  drop?: (region: string) => boolean | Promise<boolean>;
  /** null: no hold at all. */
  holdMs?: number | null;
  region?: string;
  leaseMs?: number;
}

function startFeed(options: FeedOptions = {}) {
  const store = new EpochStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
  const logs = captureLogs();
  const { sink, calls } = recordingSink(options.drop);
  const feed = new RegionFeed({
    region: options.region ?? 'r2',
    store,
    home: options.home ? store : undefined,
    holdMs: options.holdMs === null ? undefined : (options.holdMs ?? HOLD_MS),
    leaseMs: options.leaseMs ?? 60_000,
    sink,
    logger: logs.logger,
    sweepIntervalMs: 20,
    dueGraceMs: 20,
    backoff: { initialMs: 10, maxMs: 20 },
  });
  feeds.push(feed);
  const before = { failing: feed.failing, status: feed.status };
  feed.start();
  return { feed, store, logs, calls, before };
}

describe('RegionFeed', () => {
  it('holds a followed region that cannot be read, drops it after the hold, and is whole again once read', async () => {
    const { feed, store, logs, calls } = startFeed();
    await store.heartbeat(registration());
    await eventually(() => expect(feed.complete).toBe(true));
    expect(feed.status).toMatchObject({ name: 'r2', home: false, readable: true, reason: undefined, dropped: false, unreachableSinceMs: undefined });

    const cutAt = Date.now();
    store.setCut(true);
    await eventually(() => expect(feed.status.readable).toBe(false));
    expect(feed.failing).toBe(true);
    expect(feed.status.unreachableSinceMs).toBeGreaterThanOrEqual(cutAt);
    expect(feed.status.reason).toMatch(/connection refused/);
    expect(logs.warnings().map((l) => l.msg)).toContain('region cannot be read; holding its pools');
    const held = logs.warnings().find((l) => l.msg === 'region cannot be read; holding its pools')!;
    expect(held).toMatchObject({ region: 'r2', hold_ms: HOLD_MS });
    // Held: not dropped before the hold ran out.
    expect(calls).not.toContain('drop r2');
    await eventually(() => expect(feed.status.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    expect(calls.filter((c) => c === 'drop r2')).toHaveLength(1);
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(HOLD_MS);
    expect(logs.warnings().find((l) => l.msg.startsWith('region unreadable for longer than the hold'))).toMatchObject({ region: 'r2', hold_ms: HOLD_MS });

    store.setCut(false);
    await eventually(() => expect(feed.complete).toBe(true));
    expect(feed.status).toMatchObject({ readable: true, dropped: false, unreachableSinceMs: undefined, reason: undefined });
    expect(feed.failing).toBe(false);
    expect(logs.lines.find((l) => l.msg === 'region read again')).toMatchObject({ region: 'r2', dropped: true });
  });

  it('a region read again before its drop went through is not marked dropped', async () => {
    let finish!: (dropped: boolean) => void;
    const { feed, store, calls } = startFeed({ drop: () => new Promise<boolean>((resolve) => (finish = resolve)) });
    await eventually(() => expect(feed.complete).toBe(true));
    store.setCut(true);
    await eventually(() => expect(calls).toContain('drop r2'), { timeoutMs: HOLD_MS + 2000 });
    store.setCut(false);
    await eventually(() => expect(feed.status.readable).toBe(true));
    finish(true);
    await throughout(100, 10, () => expect(feed.status.dropped).toBe(false));
  });

  it('a drop that ended early (a snapshot came meanwhile) leaves the region not dropped', async () => {
    const { feed, store, calls } = startFeed({ drop: async () => false });
    await eventually(() => expect(feed.complete).toBe(true));
    store.setCut(true);
    await eventually(() => expect(calls).toContain('drop r2'), { timeoutMs: HOLD_MS + 2000 });
    await throughout(100, 10, () => expect(feed.status.dropped).toBe(false));
  });

  it('a drop that fails is logged with its error and leaves the region not dropped; nothing goes unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { feed, store, logs } = startFeed({ drop: async () => Promise.reject(new Error('drop broke')) });
      await eventually(() => expect(feed.complete).toBe(true));
      store.setCut(true);
      await eventually(() => expect(logs.lines.find((l) => l.msg === 'dropping the region\'s pools failed')).toBeDefined(), { timeoutMs: HOLD_MS + 2000 });
      const line = logs.lines.find((l) => l.msg === 'dropping the region\'s pools failed')!;
      expect(line).toMatchObject({ level: 50, region: 'r2', err: { message: 'drop broke' } });
      expect(feed.status.dropped).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('never drops the home region: it is only held', async () => {
    const { feed, store, logs, calls } = startFeed({ home: true });
    expect(feed.isHome).toBe(true);
    await eventually(() => expect(feed.complete).toBe(true));
    store.setCut(true);
    await eventually(() => expect(feed.status.readable).toBe(false));
    await throughout(HOLD_MS * 3, 10, () => expect(feed.status.dropped).toBe(false));
    expect(calls).not.toContain('drop r2');
    expect(logs.warnings().map((l) => l.msg)).not.toContain('region cannot be read; holding its pools');
  });

  it('starts not read, not failing, not dropped; a read tells the sink once, and reads that change nothing tell it nothing', async () => {
    const { feed, store, calls, before } = startFeed();
    expect(before.failing).toBe(false);
    expect(before.status).toMatchObject({ name: 'r2', readable: false, reason: 'not read yet', dropped: false, refillUntilMs: undefined });
    await eventually(() => expect(feed.complete).toBe(true));
    await eventually(() => expect(calls.filter((c) => c.startsWith('snapshot'))).toHaveLength(1));
    expect(calls.filter((c) => c.startsWith('snapshot') || c.startsWith('status'))).toEqual(['snapshot r2 0 false', 'status r2']);
    // A second full read of the same region: readable still, nothing new to tell.
    feed.feed.resnapshot();
    await eventually(() => expect(calls.filter((c) => c.startsWith('snapshot'))).toHaveLength(2));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls.filter((c) => c.startsWith('status'))).toEqual(['status r2']);
    // Failing reads: told once, however many fail.
    store.setCut(true);
    await eventually(() => expect(feed.failing).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls.filter((c) => c.startsWith('status'))).toEqual(['status r2', 'status r2']);
  });

  it('a region read again before the hold ran out is never dropped', async () => {
    const { feed, store, calls } = startFeed({ holdMs: 300 });
    await eventually(() => expect(feed.complete).toBe(true));
    store.setCut(true);
    await eventually(() => expect(feed.status.readable).toBe(false));
    store.setCut(false);
    await eventually(() => expect(feed.complete).toBe(true));
    await throughout(500, 20, () => expect(calls).not.toContain('drop r2'));
  });

  it('a stopped feed drops nothing when its hold would have run out', async () => {
    const { feed, store, calls } = startFeed();
    await eventually(() => expect(feed.complete).toBe(true));
    store.setCut(true);
    await eventually(() => expect(feed.status.readable).toBe(false));
    await feed.stop();
    await throughout(HOLD_MS * 3, 20, () => expect(calls).not.toContain('drop r2'));
  });

  it('a followed region without a hold is held for good: never dropped, no hold warning', async () => {
    const { feed, store, logs, calls } = startFeed({ holdMs: null });
    await eventually(() => expect(feed.complete).toBe(true));
    store.setCut(true);
    await eventually(() => expect(feed.status.readable).toBe(false));
    await throughout(HOLD_MS * 2, 20, () => expect(calls).not.toContain('drop r2'));
    expect(logs.warnings().map((l) => l.msg)).not.toContain('region cannot be read; holding its pools');
  });

  it('the drop warning names when the region stopped answering, not when the hold ran out', async () => {
    const { feed, store, logs } = startFeed();
    await eventually(() => expect(feed.complete).toBe(true));
    store.setCut(true);
    await eventually(() => expect(feed.status.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    const held = logs.warnings().find((l) => l.msg === 'region cannot be read; holding its pools')!;
    const dropped = logs.warnings().find((l) => l.msg.startsWith('region unreadable for longer than the hold'))!;
    expect(dropped.unreachable_since).toBe(held.unreachable_since);
    expect(held.unreachable_since).toBe(new Date(feed.status.unreachableSinceMs!).toISOString());
  });

  it.each(['r2', ''])('a store that lost its data (region %j) is refilled for one lease: pools it lacks are held, then a fresh read decides', async (region) => {
    const LEASE = 300;
    const { feed, store, logs, calls } = startFeed({ region, leaseMs: LEASE });
    await eventually(() => expect(feed.complete).toBe(true));
    store.epoch = 'a new epoch';
    const lostAt = Date.now();
    store.breakWatches(new Error('connection reset'));
    await eventually(() => expect(feed.status.refillUntilMs).toBeDefined());
    const status = feed.status;
    expect(status.refillUntilMs).toBeGreaterThanOrEqual(lostAt + LEASE);
    expect(status.refillUntilMs).toBeLessThan(lostAt + LEASE + 1000);
    expect(status.reason).toBe(`store lost its data: leases still being renewed may be missing until ${new Date(status.refillUntilMs!).toISOString()}`);
    expect(feed.complete).toBe(false);
    const warning = logs.warnings().find((l) => l.msg.startsWith('the store lost its data (its epoch changed)'))!;
    expect(warning.msg).toBe('the store lost its data (its epoch changed); holding every pool for one lease while PoolRelays re-register');
    expect(warning.until).toBe(new Date(status.refillUntilMs!).toISOString());
    expect('region' in warning).toBe(region !== '');
    if (region !== '') expect(warning.region).toBe(region);
    // The read that found the new epoch held what it lacks.
    expect(calls.filter((c) => c.startsWith('snapshot'))).toEqual([`snapshot ${region} 0 false`, `snapshot ${region} 0 true`]);
    const statuses = calls.filter((c) => c.startsWith('status')).length;
    // One lease later a fresh read decides, and the region is complete again.
    await eventually(() => expect(feed.complete).toBe(true), { timeoutMs: LEASE + 2000 });
    expect(Date.now() - lostAt).toBeGreaterThanOrEqual(LEASE);
    expect(feed.status).toMatchObject({ reason: undefined, refillUntilMs: undefined });
    expect(calls.filter((c) => c.startsWith('snapshot')).at(-1)).toBe(`snapshot ${region} 0 false`);
    expect(calls.filter((c) => c.startsWith('status')).length).toBeGreaterThan(statuses);
    // A blip with the same epoch: the log is resumed where it was left, nothing read again, no loss.
    store.breakWatches(new Error('connection reset'));
    await eventually(() => expect(logs.lines.filter((l) => l.msg === 'change log resumed')).toHaveLength(1));
    expect(calls.filter((c) => c.startsWith('snapshot'))).toHaveLength(3);
    // A read of the same epoch again is no loss either.
    feed.feed.resnapshot();
    await eventually(() => expect(calls.filter((c) => c.startsWith('snapshot'))).toHaveLength(4));
    expect(feed.status.refillUntilMs).toBeUndefined();
    expect(logs.warnings().filter((l) => l.msg.startsWith('the store lost its data'))).toHaveLength(1);
  });

  it('an epoch written after a first read that found none is no loss; a written one gone missing is one, once', async () => {
    const { feed, store, logs, calls } = startFeed({ leaseMs: 300 });
    store.epoch = UNWRITTEN_EPOCH;
    await eventually(() => expect(feed.complete).toBe(true));
    const reads = () => calls.filter((c) => c.startsWith('snapshot')).length;
    const lost = () => logs.warnings().filter((l) => l.msg.startsWith('the store lost its data'));
    // The region's replicas write the epoch; the follower reads again after a blip.
    store.epoch = 'first written';
    store.breakWatches(new Error('connection reset'));
    await eventually(() => expect(reads()).toBe(2));
    await eventually(() => expect(feed.complete).toBe(true));
    expect(feed.status.refillUntilMs).toBeUndefined();
    expect(lost()).toEqual([]);
    // The data is lost (the key gone): one refill, and the epoch written next is not a second one.
    store.epoch = UNWRITTEN_EPOCH;
    store.breakWatches(new Error('connection reset'));
    await eventually(() => expect(feed.status.refillUntilMs).toBeDefined());
    store.epoch = 'written again';
    store.breakWatches(new Error('connection reset'));
    await eventually(() => expect(feed.complete).toBe(true), { timeoutMs: 3000 });
    expect(lost()).toHaveLength(1);
  });
});
