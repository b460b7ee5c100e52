// A region's renewal window, its refills and its unreadable warnings (docs/contract.md §9, docs/design.md
// "The renewal window", docs/operations.md "Logs"): an outage the window status reports is logged once
// (`store outage ended`) and counted through the sink; the window is open until the outage's end plus its
// window and closes by itself (the status is reported again then); a later end of the same outage moves it;
// at the first read, only an outage whose window is still open counts. A store replaced under the follow is
// refilled for one lease; the unreadable warning, its reminders and the line when it is read again carry
// their fields; a region's entry (region-entry.ts) says what its status says.
import { afterEach, describe, expect, it } from 'vitest';
import { regionEntry } from '../../src/join/region-entry.js';
import { RegionFeed, UNREADABLE_REMINDER_MS, type RegionFeedSink, type RegionFeedStatus } from '../../src/join/region-feed.js';
import type { StoreFeedSink } from '../../src/join/store-feed.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { StoreReplacedError, type RenewalWindowStatus, type StoreOutage } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs } from '../support/logs.js';
import { eventually, throughout } from '../support/wait.js';

const feeds: RegionFeed[] = [];
afterEach(async () => {
  for (const feed of feeds.splice(0)) await feed.stop();
});

/** A store whose renewal window says what the test sets. */
class WindowStore extends DelegatingStore {
  window: RenewalWindowStatus = { nowMs: 0, stampMs: undefined, lastOutage: undefined, open: false, holding: false };
  windowReads = 0;

  async renewalWindow(): Promise<RenewalWindowStatus> {
    this.windowReads += 1;
    return this.window;
  }
}

interface Options {
  home?: boolean;
  region?: string;
  leaseMs?: number;
  /** Start the feed (default true). */
  start?: boolean;
  /** A sink without `outage` (it is optional). */
  noOutage?: boolean;
}

function startFeed(options: Options = {}) {
  const store = new WindowStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
  const logs = captureLogs();
  const clock = { now: 1_700_000_000_000 };
  const region = options.region ?? 'r2';
  const calls: string[] = [];
  const outages: Array<[string, StoreOutage]> = [];
  /** The feed's status as of each sink.status call. */
  const statuses: RegionFeedStatus[] = [];
  let feed!: RegionFeed;
  const sink: RegionFeedSink = {
    snapshot: (r, snapshot, holdMissing) => void calls.push(`snapshot ${r} ${holdMissing}`),
    event: () => {},
    due: () => {},
    status: (r) => {
      calls.push(`status ${r}`);
      statuses.push(feed.status);
    },
    outage: (r, outage) => void outages.push([r, outage]),
    drop: () => true,
  };
  if (options.noOutage) delete sink.outage;
  feed = new RegionFeed({
    region,
    store,
    home: options.home ? store : undefined,
    holdMs: options.home ? undefined : 60_000,
    leaseMs: options.leaseMs ?? 60_000,
    sink,
    logger: logs.logger,
    now: () => clock.now,
    sweepIntervalMs: 20,
    dueGraceMs: 20,
    backoff: { initialMs: 10, maxMs: 20 },
  });
  feeds.push(feed);
  /** The StoreFeed's sink, as the StoreFeed calls it (for reads the test wants at once, not a second apart). */
  const feedSink = (feed.feed as unknown as { options: { sink: StoreFeedSink } }).options.sink;
  if (options.start !== false) feed.start();
  return { feed, store, logs, clock, calls, outages, statuses, feedSink, region };
}

const outage = (startMs: number, endMs: number, windowMs: number, covered = 3): StoreOutage => ({ startMs, endMs, windowMs, covered });
const windowStatus = (nowMs: number, lastOutage: StoreOutage | undefined): RenewalWindowStatus => ({
  nowMs,
  stampMs: nowMs,
  lastOutage,
  open: lastOutage !== undefined && nowMs < lastOutage.endMs + lastOutage.windowMs,
  holding: false,
});
const iso = (ms: number) => new Date(ms).toISOString();

describe('RegionFeed: the renewal window', () => {
  it('before any read, no outage is known and no window is open', () => {
    const { feed } = startFeed({ start: false });
    expect(feed.status).toMatchObject({ lastOutageEndedMs: undefined, renewalWindowOpen: false });
    expect(regionEntry(feed.status)).not.toHaveProperty('renewal_window_open');
  });

  it('reads the window from the store, logs an outage whose window is open once, and counts it', async () => {
    const { feed, store, logs, outages } = startFeed({ home: true, region: 'r1' });
    const o = outage(100_000, 160_000, 30_000, 7);
    store.window = windowStatus(170_000, o);
    await eventually(() => expect(outages).toHaveLength(1));
    expect(store.windowReads).toBeGreaterThanOrEqual(1);
    expect(outages[0]).toEqual(['r1', o]);
    const lines = logs.warnings().filter((l) => l.msg === 'store outage ended');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      region: 'r1',
      outage_ms: 60_000,
      started_at: iso(100_000),
      ended_at: iso(160_000),
      window_ms: 30_000,
      window_until: iso(190_000),
      leases_in_window: 7,
    });
    expect(feed.status).toMatchObject({ lastOutageEndedMs: 160_000, renewalWindowOpen: true });
  });

  it('the window is open until end + window, then closes by itself and the status is reported again', async () => {
    const { feed, logs, outages, statuses, calls, feedSink, region } = startFeed({ start: false });
    const o = outage(1_000, 5_000, 400);
    feedSink.window!(windowStatus(5_100, o)); // 300 ms of the window left
    const openedAt = performance.now();
    expect(outages).toEqual([[region, o]]);
    expect(logs.warnings().filter((l) => l.msg === 'store outage ended')).toHaveLength(1);
    expect(calls).toEqual([`status ${region}`]);
    expect(statuses[0]).toMatchObject({ lastOutageEndedMs: 5_000, renewalWindowOpen: true });
    expect(feed.status.renewalWindowOpen).toBe(true);
    expect(regionEntry(feed.status)).toMatchObject({ last_outage_ended: iso(5_000), renewal_window_open: true });

    await eventually(() => expect(calls).toHaveLength(2), { timeoutMs: 3000 });
    expect(performance.now() - openedAt).toBeGreaterThanOrEqual(295);
    expect(statuses[1]).toMatchObject({ lastOutageEndedMs: 5_000, renewalWindowOpen: false });
    expect(regionEntry(feed.status)).toMatchObject({ last_outage_ended: iso(5_000), renewal_window_open: false });
    // Once: the timer is not set again.
    await throughout(100, 10, () => expect(calls).toHaveLength(2));
  });

  it('a second read of the same outage logs nothing and reports nothing; a later end moves the window', async () => {
    const { feed, logs, outages, calls, feedSink, region } = startFeed({ start: false });
    const o = outage(1_000, 5_000, 60_000);
    feedSink.window!(windowStatus(6_000, o));
    expect(calls).toHaveLength(1);
    feedSink.window!(windowStatus(7_000, o));
    expect(calls).toHaveLength(1);
    expect(outages).toHaveLength(1);
    expect(logs.warnings().filter((l) => l.msg === 'store outage ended')).toHaveLength(1);

    // The same outage (same start), its end moved by a writer that got through later: no new line, but the
    // status is reported with the new end.
    const later = outage(1_000, 9_000, 60_000);
    feedSink.window!(windowStatus(9_500, later));
    expect(calls).toEqual([`status ${region}`, `status ${region}`]);
    expect(outages).toHaveLength(1);
    expect(logs.warnings().filter((l) => l.msg === 'store outage ended')).toHaveLength(1);
    expect(feed.status).toMatchObject({ lastOutageEndedMs: 9_000, renewalWindowOpen: true });

    // A new outage (another start) is logged and counted.
    const next = outage(20_000, 21_000, 60_000, 2);
    feedSink.window!(windowStatus(21_500, next));
    expect(outages.map(([, x]) => x)).toEqual([o, next]);
    const lines = logs.warnings().filter((l) => l.msg === 'store outage ended');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ outage_ms: 1_000, started_at: iso(20_000), ended_at: iso(21_000), window_until: iso(81_000), leases_in_window: 2 });
    expect(calls).toHaveLength(3);
  });

  it('at the first read, an outage whose window has run is history: not logged, not counted, the window closed', async () => {
    const { feed, logs, outages, calls, feedSink } = startFeed({ start: false });
    feedSink.window!(windowStatus(10_000, outage(1_000, 5_000, 5_000))); // ran out exactly now
    expect(outages).toEqual([]);
    expect(logs.warnings().filter((l) => l.msg === 'store outage ended')).toEqual([]);
    expect(feed.status).toMatchObject({ lastOutageEndedMs: 5_000, renewalWindowOpen: false });
    expect(regionEntry(feed.status)).toMatchObject({ last_outage_ended: iso(5_000), renewal_window_open: false });
    // Its end is news to the entry, though; and no timer is left to report its close again.
    expect(calls).toHaveLength(1);
    await throughout(40, 5, () => expect(calls).toHaveLength(1));
    // After the first read, a new outage counts even when its window has run already.
    feedSink.window!(windowStatus(40_000, outage(20_000, 25_000, 5_000)));
    expect(outages).toHaveLength(1);
    expect(logs.warnings().filter((l) => l.msg === 'store outage ended')).toHaveLength(1);
    expect(feed.status.renewalWindowOpen).toBe(false);
  });

  it('a sink without outage() still gets the line and the status', () => {
    const { feed, logs, calls, feedSink } = startFeed({ start: false, noOutage: true });
    feedSink.window!(windowStatus(6_000, outage(1_000, 5_000, 60_000)));
    expect(logs.warnings().filter((l) => l.msg === 'store outage ended')).toHaveLength(1);
    expect(calls).toHaveLength(1);
    expect(feed.status.renewalWindowOpen).toBe(true);
  });

  it('a window read with no outage at all reports nothing', () => {
    const { feed, calls, outages, feedSink } = startFeed({ start: false });
    feedSink.window!(windowStatus(10_000, undefined));
    expect(calls).toEqual([]);
    expect(outages).toEqual([]);
    expect(feed.status).toMatchObject({ lastOutageEndedMs: undefined, renewalWindowOpen: false });
  });

  it('an open window read again as closed is reported, and its timer no longer fires', async () => {
    const { feed, calls, feedSink } = startFeed({ start: false });
    const o = outage(1_000, 5_000, 200);
    feedSink.window!(windowStatus(5_000, o));
    expect(feed.status.renewalWindowOpen).toBe(true);
    expect(calls).toHaveLength(1);
    feedSink.window!(windowStatus(5_300, o));
    expect(feed.status.renewalWindowOpen).toBe(false);
    expect(calls).toHaveLength(2);
    await throughout(350, 10, () => expect(calls).toHaveLength(2));
  });
});

describe('RegionFeed: refills', () => {
  it('a store replaced under the follow (its log went back) is refilled for one lease, then complete again', async () => {
    const { feed, store, logs, calls, region } = startFeed({ start: false, leaseMs: 300 });
    store.failWatches.push(new StoreReplacedError('0-0'));
    feed.start();
    await eventually(() => expect(feed.status.refillUntilMs).toBeDefined());
    const warning = logs.warnings().find((l) => l.msg.startsWith('the store lost its data'))!;
    expect(warning.msg).toBe('the store lost its data (its change log went back); holding every pool for one lease while PoolRelays re-register');
    expect(warning.until).toBe(iso(feed.status.refillUntilMs!));
    expect(calls).toContain(`snapshot ${region} true`);
    await eventually(() => expect(feed.status.readable).toBe(true));
    expect(feed.complete).toBe(false);
    expect(feed.status.reason).toMatch(/^store lost its data: leases still being renewed may be missing until /);
    expect(regionEntry(feed.status)).toMatchObject({ complete: false, reason: feed.status.reason });

    await eventually(() => expect(feed.complete).toBe(true), { timeoutMs: 3000 });
    expect(feed.status).toMatchObject({ refillUntilMs: undefined, reason: undefined });
    expect(regionEntry(feed.status)).toStrictEqual({ name: region, complete: true, dropped: false });
    // Once: the next snapshot is an ordinary one, reported to nobody.
    const statusCalls = calls.filter((c) => c.startsWith('status')).length;
    const snapshots = calls.filter((c) => c.startsWith('snapshot')).length;
    feed.feed.resnapshot();
    await eventually(() => expect(calls.filter((c) => c.startsWith('snapshot')).length).toBeGreaterThan(snapshots));
    await throughout(60, 10, () => expect(calls.filter((c) => c.startsWith('status')).length).toBe(statusCalls));
    expect(logs.warnings().filter((l) => l.msg.startsWith('the store lost its data'))).toHaveLength(1);
  });

  it('a changed epoch names its cause', async () => {
    const { feed, store, logs } = startFeed();
    store.epoch = 'first';
    await eventually(() => expect(feed.complete).toBe(true));
    feed.feed.resnapshot();
    await eventually(() => expect(store.snapshotCalls).toBeGreaterThanOrEqual(2));
    store.epoch = 'second';
    feed.feed.resnapshot();
    await eventually(() => expect(logs.warnings().find((l) => l.msg.startsWith('the store lost its data'))).toBeDefined());
    expect(logs.warnings().filter((l) => l.msg.startsWith('the store lost its data')).map((l) => l.msg)).toEqual([
      'the store lost its data (its epoch changed); holding every pool for one lease while PoolRelays re-register',
    ]);
  });
});

describe('RegionFeed: unreadable warnings', () => {
  it.each([
    { home: true, warn: 'store cannot be read; keeping the last view', remind: 'store still cannot be read; keeping the last view', back: 'store read again' },
    { home: false, warn: 'region cannot be read; holding its pools', remind: 'region still cannot be read', back: 'region read again' },
  ])('home $home: one warning, a reminder at most once a minute, one line when read again', ({ home, warn, remind, back }) => {
    const { feed, logs, clock, feedSink } = startFeed({ home, start: false });
    const since = clock.now;
    feedSink.status(false, undefined);
    expect(feed.status).toMatchObject({ readable: false, reason: 'cannot be read', unreachableSinceMs: since });
    expect(feed.failing).toBe(true);
    expect(regionEntry(feed.status)).toMatchObject({ complete: false, reason: 'cannot be read', unreachable_since: iso(since) });
    expect(logs.warnings().map((l) => l.msg)).toEqual([warn]);
    expect(logs.warnings()[0]).toMatchObject({ unreachable_since: iso(since), reason: 'cannot be read' });

    // Within the minute: nothing more.
    clock.now += UNREADABLE_REMINDER_MS - 1;
    feedSink.status(false, 'store cannot be read: still down');
    expect(logs.warnings()).toHaveLength(1);
    expect(feed.status.reason).toBe('store cannot be read: still down');

    clock.now += 1;
    feedSink.status(false, 'store cannot be read: still down');
    expect(logs.warnings().map((l) => l.msg)).toEqual([warn, remind]);
    const reminder = logs.warnings()[1]!;
    expect(reminder).toMatchObject({ unreachable_since: iso(since), unreadable_ms: UNREADABLE_REMINDER_MS, reason: 'store cannot be read: still down' });
    if (home) expect(reminder).not.toHaveProperty('dropped');
    else expect(reminder).toMatchObject({ dropped: false });

    // The next reminder counts from this one.
    clock.now += UNREADABLE_REMINDER_MS - 1;
    feedSink.status(false, 'store cannot be read: still down');
    expect(logs.warnings()).toHaveLength(2);
    clock.now += 1;
    feedSink.status(false, 'store cannot be read: still down');
    expect(logs.warnings()).toHaveLength(3);
    expect(logs.warnings()[2]).toMatchObject({ msg: remind, unreadable_ms: 2 * UNREADABLE_REMINDER_MS });

    clock.now += 5_000;
    feedSink.status(true, undefined);
    const line = logs.lines.find((l) => l.msg === back)!;
    expect(line).toMatchObject({ level: 30, unreachable_since: iso(since), unreadable_ms: 2 * UNREADABLE_REMINDER_MS + 5_000 });
    if (home) expect(line).not.toHaveProperty('dropped');
    else expect(line).toMatchObject({ dropped: false });
    expect(feed.status).toMatchObject({ readable: true, reason: undefined, unreachableSinceMs: undefined });
    expect(feed.failing).toBe(false);

    // Unreadable again: a new warning at once, then reminders a minute from it.
    clock.now += 1_000;
    feedSink.status(false, 'store cannot be read: down again');
    expect(logs.warnings().map((l) => l.msg).slice(3)).toEqual([warn]);
    clock.now += 1_000;
    feedSink.status(false, 'store cannot be read: down again');
    expect(logs.warnings()).toHaveLength(4);
  });
});

describe('regionEntry', () => {
  const base: RegionFeedStatus = {
    name: 'r2',
    home: false,
    readable: true,
    reason: undefined,
    unreachableSinceMs: undefined,
    dropped: false,
    lastReadAtMs: 1,
    refillUntilMs: undefined,
    lastOutageEndedMs: undefined,
    renewalWindowOpen: false,
  };

  it('is complete only when readable and not refilling; says a reason only when there is one', () => {
    expect(regionEntry(base)).toStrictEqual({ name: 'r2', complete: true, dropped: false });
    expect(regionEntry({ ...base, readable: false })).toStrictEqual({ name: 'r2', complete: false, dropped: false });
    expect(regionEntry({ ...base, refillUntilMs: 5 })).toStrictEqual({ name: 'r2', complete: false, dropped: false });
    expect(regionEntry({ ...base, readable: false, reason: 'down', unreachableSinceMs: 0, dropped: true })).toStrictEqual({
      name: 'r2',
      complete: false,
      reason: 'down',
      unreachable_since: iso(0),
      dropped: true,
    });
  });

  it('says the last outage and whether its window is open once an outage is known', () => {
    expect(regionEntry({ ...base, lastOutageEndedMs: 0, renewalWindowOpen: true })).toStrictEqual({
      name: 'r2',
      complete: true,
      dropped: false,
      last_outage_ended: iso(0),
      renewal_window_open: true,
    });
    expect(regionEntry({ ...base, lastOutageEndedMs: 1_000, renewalWindowOpen: false })).toStrictEqual({
      name: 'r2',
      complete: true,
      dropped: false,
      last_outage_ended: iso(1_000),
      renewal_window_open: false,
    });
  });
});
