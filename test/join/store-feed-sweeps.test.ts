// The store feed's timer and its logs (docs/design.md "The store", docs/operations.md "Log lines"): the
// home store swept every 250 ms, one sweep at a time; a followed store's due deadlines read with a grace
// of a second; a failing sweep or due read logged once until one succeeds; the snapshot log line; the
// backoff cut short when the store answers again; a re-read on demand.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_DUE_GRACE_MS,
  DEFAULT_SWEEP_INTERVAL_MS,
  MIN_SWEEP_GAP_MS,
  nextSweepDelayMs,
  STORE_BACKOFF,
  StoreFeed,
  type StoreFeedOptions,
} from '../../src/join/store-feed.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError, type DueLapse, type StoreSnapshot } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually } from '../support/wait.js';

const feeds: StoreFeed[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const feed of feeds.splice(0)) await feed.stop();
});

/** A store whose due reads and availability listeners the test sees. */
class WatchedStore extends DelegatingStore {
  graces: Array<number | undefined> = [];
  availableListeners = new Set<() => void>();
  override dueLapses(graceMs?: number): Promise<DueLapse[]> {
    this.graces.push(graceMs);
    return super.dueLapses(graceMs);
  }
  onAvailable(listener: () => void): () => void {
    this.availableListeners.add(listener);
    return () => this.availableListeners.delete(listener);
  }
}

function feedOf(options: Partial<StoreFeedOptions> & { store?: WatchedStore } = {}) {
  const store = options.store ?? new WatchedStore(createMemoryStore({ leaseMs: 60_000 }));
  const { logger, lines } = captureLogs('debug');
  const due: DueLapse[][] = [];
  const snapshots: StoreSnapshot[] = [];
  const statuses: boolean[] = [];
  const feed = new StoreFeed({
    store,
    logger,
    backoff: { initialMs: 10, maxMs: 40 },
    sink: {
      snapshot: (snapshot) => void snapshots.push(snapshot),
      event: () => {},
      status: (readable) => statuses.push(readable),
      due: (lapses) => due.push(lapses),
    },
    ...options,
  });
  feeds.push(feed);
  return { feed, store, lines, due, snapshots, statuses };
}

const failure = () => new StoreUnavailableError('command timed out after 1000 ms');

describe('StoreFeed: the sweep timer', () => {
  it('sweeps every 250 ms by default, one sweep at a time, and not after stop()', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    expect(DEFAULT_SWEEP_INTERVAL_MS).toBe(250);
    let calls = 0;
    let finish: () => void = () => {};
    const sweep = () => {
      calls += 1;
      return new Promise<void>((resolve) => (finish = resolve));
    };
    const { feed } = feedOf({ sweep });
    feed.start();
    vi.advanceTimersByTime(249);
    expect(calls).toBe(0);
    vi.advanceTimersByTime(1);
    expect(calls).toBe(1);
    // The first sweep has not finished: no other starts.
    vi.advanceTimersByTime(1000);
    expect(calls).toBe(1);
    finish();
    // The next is timed from the end of this one.
    await vi.advanceTimersByTimeAsync(249);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    finish();
    await feed.stop();
    feeds.splice(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(2);
  });

  it('sweeps again as the soonest deadline runs out when that is sooner than the interval', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const outcomes: unknown[] = [{ lapsed: 0, nextDueInMs: 40 }, { lapsed: 1, nextDueInMs: 0 }, { lapsed: 1, nextDueInMs: undefined }, 3];
    const at: number[] = [];
    let clock = 0;
    const sweep = async () => {
      at.push(clock);
      return outcomes.shift();
    };
    const { feed } = feedOf({ sweep, sweepIntervalMs: 100 });
    feed.start();
    // One fake millisecond at a time, so `clock` is the time each sweep starts at.
    while (clock < 600) {
      clock += 1;
      await vi.advanceTimersByTimeAsync(1);
    }
    // The interval; + 40 + 1; + the least gap (due at once); + the interval (no lease held); + the
    // interval (not a SweepResult); + the interval (nothing more to say).
    const second = 100 + 41;
    const third = second + MIN_SWEEP_GAP_MS;
    expect(at.slice(0, 6)).toEqual([100, second, third, third + 100, third + 200, third + 300]);
  });

  it('a failed sweep is tried again after the interval', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let calls = 0;
    const sweep = async () => {
      calls += 1;
      throw failure();
    };
    const { feed } = feedOf({ sweep, sweepIntervalMs: 100 });
    feed.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
  });

  it('the next sweep: at the interval, or the soonest deadline plus the gap, whichever comes first', () => {
    expect(MIN_SWEEP_GAP_MS).toBe(10);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 20 })).toBe(21);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 20.2 })).toBe(22);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 9 })).toBe(10);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 8 })).toBe(10);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 0 })).toBe(10);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: -5 })).toBe(10);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 248 })).toBe(249);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 249 })).toBe(250);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 250 })).toBe(250);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: 10_000 })).toBe(250);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: undefined })).toBe(250);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: Number.NaN })).toBe(250);
    expect(nextSweepDelayMs(250, { lapsed: 0, nextDueInMs: Number.POSITIVE_INFINITY })).toBe(250);
    expect(nextSweepDelayMs(250, undefined)).toBe(250);
    expect(nextSweepDelayMs(250, 7)).toBe(250);
  });

  it('a failing sweep is logged once until a sweep succeeds, and again after', async () => {
    let fail = true;
    const sweep = async () => {
      if (fail) throw failure();
    };
    const { feed, lines } = feedOf({ sweep, sweepIntervalMs: 5 });
    const warnings = () => lines.filter((l) => l.msg === 'sweep of due leases failed');
    feed.start();
    await eventually(() => expect(feed.lastSweepError).toBe('command timed out after 1000 ms'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(warnings()).toEqual([expect.objectContaining({ level: 40, err: 'command timed out after 1000 ms' })]);
    fail = false;
    await eventually(() => expect(feed.lastSweepError).toBeUndefined());
    fail = true;
    await eventually(() => expect(warnings()).toHaveLength(2));
  });

  it('a failure that is not an Error is logged by its text', async () => {
    const { feed, lines } = feedOf({ sweep: () => Promise.reject('gone'), sweepIntervalMs: 5 });
    feed.start();
    await eventually(() => expect(lines.find((l) => l.msg === 'sweep of due leases failed')?.err).toBe('gone'));
    expect(feed.lastSweepError).toBe('gone');
  });
});

describe('StoreFeed: following a store it does not sweep', () => {
  it('reads due deadlines with a grace of one second by default, and reports only a non-empty read', async () => {
    const { feed, store, due } = feedOf({ sweepIntervalMs: 5 });
    expect(DEFAULT_DUE_GRACE_MS).toBe(1000);
    feed.start();
    await eventually(() => expect(store.graces.length).toBeGreaterThan(2));
    expect(new Set(store.graces)).toEqual(new Set([1000]));
    expect(due).toEqual([]);
  });

  it('a failing due read is logged once, as a read, until one succeeds', async () => {
    const { feed, store, lines } = feedOf({ sweepIntervalMs: 5, dueGraceMs: 0 });
    store.failDue = [failure(), failure(), failure()];
    feed.start();
    await eventually(() => expect(store.failDue).toHaveLength(0));
    await eventually(() => expect(feed.lastSweepError).toBeUndefined());
    const warnings = lines.filter((l) => l.msg === 'read of due leases failed');
    expect(warnings).toEqual([expect.objectContaining({ level: 40, err: 'command timed out after 1000 ms' })]);
    expect(lines.some((l) => l.msg === 'sweep of due leases failed')).toBe(false);
  });

  it("notes when the store last answered a read, on this replica's injected clock", async () => {
    let now = 5_000;
    const { feed, store } = feedOf({ sweepIntervalMs: 60_000, now: () => now });
    expect(feed.lastReadAtMs).toBeUndefined();
    feed.start();
    await eventually(() => expect(feed.lastReadAtMs).toBe(5_000));
    // A change read from the log is a read too.
    now = 6_000;
    await store.heartbeat(registration({ name: 'x' }));
    await eventually(() => expect(feed.lastReadAtMs).toBe(6_000));
  });
});

describe('StoreFeed: reads', () => {
  it('logs each applied snapshot with its lease count and timings', async () => {
    const { feed, store, lines } = feedOf({ sweepIntervalMs: 60_000 });
    await store.heartbeat(registration({ name: 'a' }));
    await store.heartbeat(registration({ name: 'b' }));
    feed.start();
    await eventually(() => expect(lines.some((l) => l.msg === 'store snapshot applied')).toBe(true));
    const line = lines.find((l) => l.msg === 'store snapshot applied')!;
    expect(line).toMatchObject({ level: 30, leases: 2 });
    expect(line.read_ms).toEqual(expect.any(Number));
    expect(line.apply_ms).toEqual(expect.any(Number));
  });

  it('a failed read is logged (debug: the region feed warns of the outage) with the error and the delay before the next', async () => {
    const { feed, store, lines, statuses } = feedOf({ sweepIntervalMs: 60_000, backoff: { initialMs: 30, maxMs: 30, jitter: 0 } });
    store.failSnapshots = [failure()];
    feed.start();
    await eventually(() => expect(statuses).toEqual([false, true]));
    expect(lines.find((l) => l.msg === 'store cannot be read; retrying')).toMatchObject({
      level: 20,
      err: 'command timed out after 1000 ms',
      retry_in_ms: 30,
    });
  });

  it('re-reads at once when the store answers again during the backoff', async () => {
    const { feed, store, snapshots, statuses } = feedOf({ sweepIntervalMs: 60_000, backoff: { initialMs: 60_000, jitter: 0 } });
    store.failSnapshots = [failure()];
    feed.start();
    await eventually(() => expect(statuses).toEqual([false]));
    await eventually(() => expect(store.availableListeners.size).toBe(1));
    for (const listener of store.availableListeners) listener();
    await eventually(() => expect(snapshots).toHaveLength(1), { timeoutMs: 2000 });
    expect(statuses).toEqual([false, true]);
    // The listener is removed once the wait is over.
    expect(store.availableListeners.size).toBe(0);
  });

  it('resnapshot() reads a new snapshot and follows the log from it', async () => {
    const { feed, store, snapshots } = feedOf({ sweepIntervalMs: 60_000 });
    feed.start();
    await eventually(() => expect(snapshots).toHaveLength(1));
    await store.heartbeat(registration({ name: 'a' }));
    feed.resnapshot();
    await eventually(() => expect(snapshots).toHaveLength(2));
    expect(snapshots[1]!.records.map((r) => r.registration.name)).toEqual(['a']);
  });

  it('re-reads after failures no later than 2 s, with jitter below the cap', () => {
    expect(STORE_BACKOFF).toEqual({ initialMs: 250, maxMs: 2000, jitterBelowCap: true });
  });
});
