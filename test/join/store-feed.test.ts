// The store feed: snapshot, then the change log; after a failed read, status false with the reason and a
// growing backoff, then status true again; a log that no longer reaches back means a new snapshot at once.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { poolKey } from '../../src/contract/index.js';
import { StoreFeed } from '../../src/join/store-feed.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError, StaleDataError, StoreUnavailableError, type DueLapse, type LeaseEvent, type StoreSnapshot } from '../../src/store/types.js';
import type { BackoffOptions } from '../../src/util/backoff.js';
import { captureLogs, silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually } from '../support/wait.js';
import { DelegatingStore } from '../support/delegating-store.js';

const feeds: StoreFeed[] = [];
const stores: DelegatingStore[] = [];
afterEach(async () => {
  for (const feed of feeds.splice(0)) await feed.stop();
  for (const store of stores.splice(0)) await store.close();
});

function startFeed(options: { leaseMs?: number; backoff?: BackoffOptions; sweepIntervalMs?: number; follower?: boolean; onResumed?: () => void } = {}) {
  const store = new DelegatingStore(createMemoryStore({ leaseMs: options.leaseMs ?? 60_000 }));
  stores.push(store);
  const { logger, lines } = captureLogs('debug');
  const snapshots: StoreSnapshot[] = [];
  const events: LeaseEvent[] = [];
  const statuses: Array<{ readable: boolean; reason?: string }> = [];
  const due: DueLapse[][] = [];
  /** The due leases each resume handed the sink. */
  const resumes: Array<readonly DueLapse[]> = [];
  const feed = new StoreFeed({
    store,
    // The home region's feed sweeps its store; a followed region's feed reads due deadlines instead.
    sweep: options.follower ? undefined : () => store.sweep(),
    dueGraceMs: 0,
    logger,
    backoff: options.backoff ?? { initialMs: 10, maxMs: 40 },
    sweepIntervalMs: options.sweepIntervalMs ?? 10_000,
    sink: {
      snapshot: (snapshot) => void snapshots.push(snapshot),
      event: (event) => events.push(event),
      status: (readable, reason) => statuses.push(reason === undefined ? { readable } : { readable, reason }),
      due: (lapses) => due.push(lapses),
      resumed: (_, lapses) => {
        resumes.push(lapses);
        options.onResumed?.();
      },
    },
  });
  feeds.push(feed);
  const retries = () => lines.filter((l) => 'retry_in_ms' in l).map((l) => l.retry_in_ms as number);
  return { feed, store, lines, snapshots, events, statuses, retries, due, resumes };
}

const unavailable = () => new StoreUnavailableError('command timed out after 1000 ms');

/** Starts the feed, waits until it read the store, then cuts the store off and waits until the feed says so. */
async function readThenCut(feed: StoreFeed, store: DelegatingStore, statuses: Array<{ readable: boolean }>): Promise<void> {
  feed.start();
  await eventually(() => expect(statuses).toEqual([{ readable: true }]));
  store.setCut(true, unavailable());
  await eventually(() => expect(statuses.at(-1)?.readable).toBe(false));
}

/** A full collection, asked of V8 (the flag exposes `gc` to contexts made after it). */
setFlagsFromString('--expose_gc');
const collectGarbage = runInNewContext('gc') as () => void;

describe('StoreFeed', () => {
  it('reads a snapshot, reports readable, then follows the change log', async () => {
    const { feed, store, snapshots, events, statuses } = startFeed();
    await store.heartbeat(registration({ name: 'before' }));
    feed.start();
    await eventually(() => expect(statuses).toEqual([{ readable: true }]));
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]!.records.map((r) => r.registration.name)).toEqual(['before']);

    await store.heartbeat(registration({ name: 'after' }));
    await eventually(() => expect(events).toHaveLength(1));
    expect(events[0]).toMatchObject({ type: 'upsert', record: { registration: { name: 'after' } } });
  });

  it('holds nothing of a snapshot once it is applied, while it follows the log', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }));
    stores.push(store);
    await store.heartbeat(registration({ name: 'read' }));
    let applied: WeakRef<StoreSnapshot> | undefined;
    const events: LeaseEvent[] = [];
    const feed = new StoreFeed({
      store,
      sweep: () => store.sweep(),
      logger: captureLogs('debug').logger,
      sweepIntervalMs: 10_000,
      sink: {
        // The sink keeps what it needs of the records (the join: its pools), never the snapshot itself.
        snapshot: (snapshot) => void (applied = new WeakRef(snapshot)),
        event: (event) => events.push(event),
        status: () => {},
      },
    });
    feeds.push(feed);
    feed.start();
    await store.heartbeat(registration({ name: 'followed' }));
    await eventually(() => expect(events).toHaveLength(1));
    // A WeakRef's target lives to the end of the job that made or read it: collect in a later one.
    await eventually(() => {
      collectGarbage();
      expect(applied!.deref()).toBeUndefined();
    });
  });

  it('sweeps due leases, so lapses reach the log', async () => {
    const { feed, store, events } = startFeed({ leaseMs: 100, sweepIntervalMs: 10 });
    feed.start();
    await store.heartbeat(registration({ name: 'short' }));
    await eventually(() => expect(events.map((e) => e.type)).toEqual(['upsert', 'lapse']), { timeoutMs: 1100 });
    expect(events[1]).toMatchObject({ type: 'lapse', key: 'us-east-1/llm/short' });
  });

  it('following a store it does not sweep: reports leases past their deadline there, and logs nothing', async () => {
    const { feed, store, events, due } = startFeed({ leaseMs: 100, sweepIntervalMs: 10, follower: true });
    feed.start();
    await store.heartbeat(registration({ name: 'short' }));
    await eventually(() => expect(due.flat().map((d) => d.key)).toContain('us-east-1/llm/short'), { timeoutMs: 1100 });
    // Reported at the lease's own deadline, on the store's clock.
    const upsert = events[0];
    expect(due.flat()[0]!.atMs).toBe(upsert?.type === 'upsert' ? upsert.record.deadlineMs : NaN);
    // Nobody swept: the log holds the upsert only, and the feed's last read is recent.
    expect(events.map((e) => e.type)).toEqual(['upsert']);
    expect(feed.lastReadAtMs).toBeGreaterThan(Date.now() - 1000);
  });

  it('while the store cannot be read: status false with the reason, growing delays, then readable again', async () => {
    const { feed, store, statuses, retries, snapshots } = startFeed({ backoff: { initialMs: 10, maxMs: 40 } });
    store.failSnapshots = [unavailable(), unavailable(), unavailable(), unavailable()];
    feed.start();
    await eventually(() => expect(statuses.at(-1)).toEqual({ readable: true }));

    const reason = 'store cannot be read: command timed out after 1000 ms';
    expect(statuses).toEqual([...Array(4).fill({ readable: false, reason }), { readable: true }]);
    expect(snapshots).toHaveLength(1);
    expect(store.snapshotCalls).toBe(5);

    // 10, 20, 40, 40 ms, each with up to 20 % jitter, never beyond the cap.
    const delays = retries();
    expect(delays).toHaveLength(4);
    const bases = [10, 20, 40, 40];
    delays.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(bases[i]!);
      expect(delay).toBeLessThanOrEqual(Math.min(40, bases[i]! * 1.2));
    });
    // Each attempt waited its delay (a timer may fire up to a millisecond early by rounding).
    const gaps = store.snapshotTimes.slice(1).map((t, i) => t - store.snapshotTimes[i]!);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(delays[i]! - 2));
  });

  it('starts the backoff over once the store was read again', async () => {
    const { feed, store, statuses, retries } = startFeed({ backoff: { initialMs: 10, maxMs: 1000, jitter: 0 } });
    store.failSnapshots = [unavailable(), unavailable()];
    store.failWatches = [new StoreUnavailableError('connection reset')];
    feed.start();
    await eventually(() => expect(statuses.filter((s) => s.readable)).toHaveLength(2));
    expect(retries()).toEqual([10, 20, 10]);
    expect(statuses.map((s) => s.readable)).toEqual([false, false, true, false, true]);
    expect(statuses[3]).toEqual({ readable: false, reason: 'store cannot be read: connection reset' });
  });

  it('re-reads a snapshot at once, without backoff or status false, when the log lost its position', async () => {
    // A backoff this long would outlast the test's deadline.
    const { feed, store, statuses, snapshots, events, lines } = startFeed({ backoff: { initialMs: 60_000 } });
    store.failWatches = [new PositionLostError('42')];
    feed.start();
    await eventually(() => expect(snapshots).toHaveLength(2), { timeoutMs: 1000 });
    expect(statuses).toEqual([{ readable: true }, { readable: true }]);
    expect(lines.some((l) => l.level === 30 && l.position === '42')).toBe(true);

    await store.heartbeat(registration({ name: 'later' }));
    await eventually(() => expect(events).toHaveLength(1));
  });

  it('after a failure, resumes the log where it was left: no snapshot read, every entry since once and in order', async () => {
    const { feed, store, statuses, snapshots, events, lines, resumes } = startFeed({ follower: true });
    await store.heartbeat(registration({ name: 'before' }));
    feed.start();
    await eventually(() => expect(statuses).toEqual([{ readable: true }]));
    await store.heartbeat(registration({ name: 'first' }));
    await eventually(() => expect(events).toHaveLength(1));

    store.setCut(true, unavailable());
    await eventually(() => expect(statuses.at(-1)?.readable).toBe(false));
    await store.heartbeat(registration({ name: 'second' }));
    await store.heartbeat(registration({ name: 'third' }));
    store.setCut(false);
    await eventually(() => expect(statuses.at(-1)).toEqual({ readable: true }));
    await eventually(() => expect(events).toHaveLength(3));
    expect(events.map((e) => (e.type === 'upsert' ? e.record.registration.name : e.type))).toEqual(['first', 'second', 'third']);
    expect(snapshots).toHaveLength(1);
    expect(store.snapshotCalls).toBe(1);
    const resumed = lines.find((l) => l.msg === 'change log resumed');
    expect(resumed?.position).toBe(events[0]!.position);
    // From the resume's start to readable: a few milliseconds here.
    expect(resumed?.resume_ms).toBeGreaterThanOrEqual(0);
    expect(resumed?.resume_ms).toBeLessThan(5000);
    expect(resumes).toEqual([[]]);
  });

  it("a store this replica sweeps: the resume reads no due leases (its lapses are in its log)", async () => {
    const { feed, store, statuses, resumes } = startFeed({ leaseMs: 100 });
    await store.heartbeat(registration({ name: 'runs-out' }));
    await readThenCut(feed, store, statuses);
    await eventually(async () => expect(await store.inner.dueLapses(0)).toHaveLength(1));
    store.setCut(false);
    await eventually(() => expect(statuses.at(-1)).toEqual({ readable: true }));
    expect(resumes).toEqual([[]]);
  });

  it('while resumes keep failing, the backoff grows as it does for snapshots', async () => {
    const { feed, store, statuses, retries } = startFeed({ backoff: { initialMs: 10, maxMs: 1000, jitter: 0 } });
    await readThenCut(feed, store, statuses);
    await eventually(() => expect(retries().length).toBeGreaterThanOrEqual(4));
    expect(retries().slice(0, 4)).toEqual([10, 20, 40, 80]);
  });

  it('a log that ends by itself (the store closed under it) is read anew from a snapshot, not resumed', async () => {
    const { feed, store, statuses, snapshots } = startFeed();
    const watch = store.watch.bind(store);
    let ended = false;
    store.watch = (position, signal, epoch, reached) => {
      if (ended) return watch(position, signal, epoch, reached);
      ended = true;
      return (async function* () {})();
    };
    feed.start();
    await eventually(() => expect(snapshots).toHaveLength(2));
    await eventually(() => expect(statuses.at(-1)).toEqual({ readable: true }));
  });

  it('resnapshot() while a resume is taken back: not readable until the snapshot it asked for', async () => {
    let asked: (() => void) | undefined;
    const { feed, store, statuses, snapshots } = startFeed({ onResumed: () => asked?.() });
    asked = () => feed.resnapshot();
    await readThenCut(feed, store, statuses);
    const seen = statuses.length;
    store.setCut(false);
    await eventually(() => expect(snapshots).toHaveLength(2));
    await eventually(() => expect(statuses.at(-1)).toEqual({ readable: true }));
    expect(statuses.slice(seen).filter((s) => s.readable)).toHaveLength(1);
  });

  it('a resumed log: the sink takes it back before the entries since, with the leases due meanwhile, then readable', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 150 }));
    stores.push(store);
    const order: string[] = [];
    const feed = new StoreFeed({
      store,
      dueGraceMs: 0,
      logger: silentLogger(),
      backoff: { initialMs: 10, maxMs: 20 },
      sweepIntervalMs: 60_000,
      sink: {
        snapshot: () => void order.push('snapshot'),
        resumed: (receipt, due) => void order.push(`resumed ${receipt} due ${due.map((d) => d.key).join(',')}`),
        event: (event, receipt) => order.push(`event ${receipt} ${event.type === 'upsert' ? event.record.registration.name : event.type}`),
        status: (readable) => order.push(readable ? 'readable' : 'unreadable'),
      },
    });
    feeds.push(feed);
    await store.heartbeat(registration({ name: 'dies' }));
    feed.start();
    await eventually(() => expect(order).toEqual(['snapshot', 'readable']));
    store.setCut(true, unavailable());
    await eventually(() => expect(order.at(-1)).toBe('unreadable'));
    // Past its deadline on the store's clock, not lapsed (nobody sweeps it): due.
    await eventually(async () => expect(await store.inner.dueLapses(0)).toHaveLength(1));
    await store.heartbeat(registration({ name: 'new' }));
    store.setCut(false);
    await eventually(() => expect(order).toContain('event 3 new'));
    // Each failed attempt says unreadable again; then the resume, in this order.
    const after = order.slice(2).filter((entry, i, all) => entry !== 'unreadable' || all[i - 1] !== 'unreadable');
    expect(after).toEqual(['unreadable', `resumed 2 due ${poolKey(registration({ name: 'dies' }))}`, 'readable', 'event 3 new']);
  });

  it('a resumed log that no longer reaches back: a snapshot is read at once', async () => {
    const { feed, store, statuses, snapshots } = startFeed({ backoff: { initialMs: 10, maxMs: 20 } });
    await readThenCut(feed, store, statuses);
    store.setCut(false);
    store.failWatches.push(new PositionLostError('0'));
    await eventually(() => expect(snapshots).toHaveLength(2));
    await eventually(() => expect(statuses.at(-1)).toEqual({ readable: true }));
  });

  it('a followed store that answers with stale data as its log is resumed (a read replica cut off from its master): readable only once a snapshot is read', async () => {
    const { feed, store, statuses, snapshots } = startFeed({ follower: true, backoff: { initialMs: 10, maxMs: 20 } });
    await readThenCut(feed, store, statuses);
    const seen = statuses.length;
    store.setCut(false);
    // The due read beside the resume is the one that finds the replica behind its master.
    store.failDue.push(new StaleDataError('redis store: the replica lost its master'));
    store.failSnapshots.push(new StaleDataError('redis store: the replica lost its master'));
    await eventually(() => expect(snapshots).toHaveLength(2));
    await eventually(() => expect(statuses.at(-1)).toEqual({ readable: true }));
    // Never readable in between: only the snapshot made it so.
    expect(statuses.slice(seen).filter((s) => s.readable)).toHaveLength(1);
    expect(store.snapshotCalls).toBe(3);
  });

  it('resnapshot() reads a snapshot even after a failure it would otherwise resume from', async () => {
    const { feed, store, statuses, snapshots } = startFeed({ backoff: { initialMs: 50, maxMs: 50 } });
    await readThenCut(feed, store, statuses);
    feed.resnapshot();
    store.setCut(false);
    await eventually(() => expect(snapshots).toHaveLength(2));
  });

  it('stop() ends the loop during a backoff', async () => {
    const { feed, store, statuses } = startFeed({ backoff: { initialMs: 60_000 } });
    store.failSnapshots = [unavailable()];
    feed.start();
    await eventually(() => expect(statuses).toHaveLength(1));
    const stoppedAt = performance.now();
    await feed.stop();
    feeds.splice(feeds.indexOf(feed), 1);
    expect(performance.now() - stoppedAt).toBeLessThan(1000);
    expect(store.snapshotCalls).toBe(1);
  });
});
