// The store feed beside the renewal window (docs/contract.md §9, docs/design.md "The renewal window"):
// the window's status read beside a sweep or a due read at most once a second and handed to the sink; a
// store whose data was replaced under the follow; a stale read replica's sweep that forces a re-read; the
// warnings of a failing sweep while the store's own reads fail; nothing delivered after stop().
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StoreFeed, WINDOW_READ_INTERVAL_MS, type StoreFeedOptions, type StoreFeedSink } from '../../src/join/store-feed.js';
import { createMemoryStore } from '../../src/store/memory.js';
import {
  StaleDataError,
  StoreReplacedError,
  StoreUnavailableError,
  type RenewalWindowStatus,
  type StoreSnapshot,
} from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually } from '../support/wait.js';

const feeds: StoreFeed[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const feed of feeds.splice(0)) await feed.stop();
});

const WINDOW: RenewalWindowStatus = {
  nowMs: 1_000_000,
  stampMs: 999_900,
  lastOutage: { startMs: 990_000, endMs: 995_000, windowMs: 6000, covered: 2 },
  open: true,
  holding: true,
};

/** A store with a renewal window the test answers, and sweeps that fail on demand. */
class WindowStore extends DelegatingStore {
  windowReads = 0;
  windowAnswer: () => Promise<RenewalWindowStatus> = () => Promise.resolve(WINDOW);
  sweepFailures: Error[] = [];
  constructor() {
    super(createMemoryStore({ leaseMs: 60_000 }));
  }
  renewalWindow(): Promise<RenewalWindowStatus> {
    this.windowReads += 1;
    return this.windowAnswer();
  }
  override async sweep() {
    const failure = this.sweepFailures.shift();
    if (failure) throw failure;
    return super.sweep();
  }
}

function feedOf(options: { sink?: Partial<StoreFeedSink>; store?: WindowStore; follower?: boolean } & Omit<Partial<StoreFeedOptions>, 'sink' | 'store'> = {}) {
  const store = options.store ?? new WindowStore();
  const { logger, lines, warnings } = captureLogs('debug');
  const windows: RenewalWindowStatus[] = [];
  const statuses: Array<{ readable: boolean; reason?: string }> = [];
  const receipts: number[] = [];
  let replaced = 0;
  const snapshots: StoreSnapshot[] = [];
  const feed = new StoreFeed({
    store,
    sweep: options.sweep ?? (options.follower ? undefined : () => store.sweep()),
    dueGraceMs: options.dueGraceMs,
    logger,
    backoff: { initialMs: 10, maxMs: 40 },
    sweepIntervalMs: options.sweepIntervalMs ?? 10,
    sink: {
      snapshot: (snapshot, receipt) => {
        snapshots.push(snapshot);
        receipts.push(receipt);
      },
      event: (_, receipt) => receipts.push(receipt),
      status: (readable, reason) => statuses.push(reason === undefined ? { readable } : { readable, reason }),
      due: () => {},
      window: (status) => windows.push(status),
      replaced: () => {
        replaced += 1;
      },
      ...options.sink,
    },
  });
  feeds.push(feed);
  return { feed, store, lines, warnings, windows, statuses, receipts, snapshots, replaced: () => replaced };
}

describe('StoreFeed: the renewal window', () => {
  it('is read beside the first sweep and handed to the sink as read', async () => {
    const { feed, store, windows } = feedOf();
    feed.start();
    await eventually(() => expect(windows).toEqual([WINDOW]));
    expect(store.windowReads).toBe(1);
  });

  it('is read at most once a second however often the store is swept, and again once a second has passed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { feed, store, windows } = feedOf({ sweepIntervalMs: 10 });
    feed.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(store.windowReads).toBe(1);
    await vi.advanceTimersByTimeAsync(WINDOW_READ_INTERVAL_MS - 20);
    expect(store.windowReads).toBe(1);
    await vi.advanceTimersByTimeAsync(30);
    expect(store.windowReads).toBe(2);
    expect(windows).toHaveLength(2);
  });

  it('a read that failed is tried again at the next sweep, not a second later', async () => {
    const { feed, store, windows } = feedOf({ sweepIntervalMs: 10 });
    let first = true;
    store.windowAnswer = () => {
      if (!first) return Promise.resolve(WINDOW);
      first = false;
      return Promise.reject(new StoreUnavailableError('command timed out after 1000 ms'));
    };
    feed.start();
    await eventually(() => expect(windows).toEqual([WINDOW]), { timeoutMs: 500 });
    expect(store.windowReads).toBe(2);
  });

  it('is not read for a sink that takes no window, and a store without one is swept all the same', async () => {
    const { feed, store, lines } = feedOf({ sink: { window: undefined } });
    feed.start();
    await eventually(() => expect(lines.some((l) => l.msg === 'store snapshot applied')).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(store.windowReads).toBe(0);

    const plain = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }));
    let sweeps = 0;
    const other = feedOf({
      store: plain as unknown as WindowStore,
      sweep: async () => {
        sweeps += 1;
        return plain.sweep();
      },
    });
    other.feed.start();
    await eventually(() => expect(sweeps).toBeGreaterThan(2));
    expect(other.warnings()).toEqual([]);
  });

  it('is not handed to the sink once the feed stopped', async () => {
    const { feed, store, windows } = feedOf();
    let answer!: (status: RenewalWindowStatus) => void;
    store.windowAnswer = () => new Promise((resolve) => (answer = resolve));
    feed.start();
    await eventually(() => expect(store.windowReads).toBe(1));
    await feed.stop();
    answer(WINDOW);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(windows).toEqual([]);
  });
});

describe('StoreFeed: a store replaced or stale under the follow', () => {
  it('a store whose data was replaced: the sink is told, and a snapshot is read again at once, never marked unreadable', async () => {
    const { feed, store, statuses, snapshots, replaced, lines } = feedOf();
    store.failWatches = [new StoreReplacedError('7-0')];
    feed.start();
    await eventually(() => expect(snapshots).toHaveLength(2), { timeoutMs: 1000 });
    expect(replaced()).toBe(1);
    expect(statuses).toEqual([{ readable: true }, { readable: true }]);
    expect(lines.filter((l) => l.msg === 'fell behind the change log; re-reading a snapshot')).toEqual([]);
  });

  it('a log that lost its position says so, by name', async () => {
    const { feed, store, snapshots, lines, replaced } = feedOf();
    const { PositionLostError } = await import('../../src/store/types.js');
    store.failWatches = [new PositionLostError('42-0')];
    feed.start();
    await eventually(() => expect(snapshots).toHaveLength(2), { timeoutMs: 1000 });
    expect(replaced()).toBe(0);
    expect(lines.find((l) => l.msg === 'fell behind the change log; re-reading a snapshot')).toMatchObject({ level: 30, position: '42-0' });
  });

  it('a sweep that read stale data (a cut-off read replica) makes the feed read a snapshot again; another failure does not', async () => {
    const stale = feedOf();
    stale.store.sweepFailures = [new StaleDataError('replica link down')];
    stale.feed.start();
    await eventually(() => expect(stale.snapshots).toHaveLength(2), { timeoutMs: 1000 });

    const plain = feedOf();
    plain.store.sweepFailures = [new StoreUnavailableError('command timed out after 1000 ms')];
    plain.feed.start();
    await eventually(() => expect(plain.lines.some((l) => l.msg === 'sweep of due leases failed')).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(plain.snapshots).toHaveLength(1);
  });

  it('numbers every delivery one up from the last: snapshots and events alike', async () => {
    const { feed, store, receipts, snapshots } = feedOf();
    store.failWatches = [new StoreReplacedError('1-0')];
    feed.start();
    await eventually(() => expect(snapshots).toHaveLength(2), { timeoutMs: 1000 });
    await store.heartbeat(registration({ name: 'one' }));
    await store.heartbeat(registration({ name: 'two' }));
    await eventually(() => expect(receipts).toHaveLength(4));
    expect(receipts).toEqual([1, 2, 3, 4]);
  });

  it('logs each applied snapshot with its size and how long it took to read and to apply', async () => {
    const { feed, store, lines } = feedOf();
    await store.heartbeat(registration({ name: 'a' }));
    await store.heartbeat(registration({ name: 'b' }));
    feed.start();
    await eventually(() => expect(lines.some((l) => l.msg === 'store snapshot applied')).toBe(true));
    const line = lines.find((l) => l.msg === 'store snapshot applied')!;
    expect(line.leases).toBe(2);
    for (const field of ['read_ms', 'apply_ms'] as const) {
      expect(line[field]).toBeGreaterThanOrEqual(0);
      expect(line[field]).toBeLessThan(5000);
    }
  });
});

describe('StoreFeed: what a failing sweep logs', () => {
  it('warns of a failing sweep while the store was never read yet (the feed is not failing)', async () => {
    const { feed, store, warnings } = feedOf();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const snapshot = store.snapshot.bind(store);
    store.snapshot = async () => {
      await held;
      return snapshot();
    };
    store.sweepFailures = [new StoreUnavailableError('command timed out after 1000 ms')];
    feed.start();
    await eventually(() => expect(warnings().map((w) => w.msg)).toEqual(['sweep of due leases failed']));
    expect(warnings()[0]).toMatchObject({ err: 'command timed out after 1000 ms' });
    release();
  });

  it('while the store cannot be read (its feed has warned), a failing sweep is a debug line with its error', async () => {
    const { feed, store, warnings, lines, statuses } = feedOf({ follower: true });
    store.failSnapshots = Array.from({ length: 200 }, () => new StoreUnavailableError('connection refused'));
    store.dueLapses = () => Promise.reject(new StoreUnavailableError('connection refused'));
    feed.start();
    await eventually(() => expect(lines.some((l) => l.msg === 'read of due leases failed')).toBe(true), { timeoutMs: 1000 });
    expect(statuses[0]).toEqual({ readable: false, reason: 'store cannot be read: connection refused' });
    expect(warnings().filter((w) => w.msg === 'read of due leases failed')).toEqual([]);
    expect(lines.find((l) => l.msg === 'read of due leases failed')).toMatchObject({ level: 20, err: 'connection refused' });
  });

  it('a follower whose sink takes no due lapses reads them without failing', async () => {
    const { feed, store, warnings } = feedOf({ follower: true, sink: { due: undefined }, dueGraceMs: 0 });
    await store.heartbeat(registration({ name: 'short' }));
    store.dueLapses = () => Promise.resolve([{ key: 'us-east-1/llm/short', atMs: 1 }] as never);
    feed.start();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(warnings()).toEqual([]);
  });

  it('a re-read asked for before the feed started is a no-op', () => {
    const { feed } = feedOf();
    expect(() => feed.resnapshot()).not.toThrow();
  });
});
