// The routers' join on its own (docs/contract.md §10, docs/design.md "Routers"): who lists a router
// (static, then registered, then MCS), its fields, its lease regions and which region's registration is
// shown, the list's completeness and reasons (the store, the memory store's warm-up, the Global Router
// Service's slices, each region), a region held then dropped, stale due lapses, entries this version
// cannot read, and the view's events. Memory stores behind DelegatingStore, which a test cuts off; no
// socket, no service.
import { afterEach, describe, expect, it } from 'vitest';
import type { RouterRegistration, RouterWatchEvent } from '../../src/contract/index.js';
import { ROUTER_SHAPE, RouterJoin, type RouterJoinOptions } from '../../src/join/router-join.js';
import { createMemoryRouterStore } from '../../src/store/memory.js';
import type { DueLapse, RegistrationStore } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs, silentLogger } from '../support/logs.js';
import { eventually, throughout, waitFor } from '../support/wait.js';

const LONG_LEASE_MS = 60_000;
// Long enough that a loaded machine still sees the hold before the drop.
const HOLD_MS = 400;

const running: RouterJoin[] = [];
const stores: RegistrationStore<RouterRegistration>[] = [];
afterEach(async () => {
  for (const join of running.splice(0)) await join.stop();
  for (const store of stores.splice(0)) await store.close();
});

/** A router store that does not forget on restart (as Redis), on its own clock when `now` is given. */
function durableStore(options: { leaseMs?: number; now?: () => number } = {}) {
  const store = new DelegatingStore<RouterRegistration>(createMemoryRouterStore({ leaseMs: options.leaseMs ?? LONG_LEASE_MS, now: options.now }), {
    forgetsOnRestart: false,
  });
  stores.push(store);
  return store;
}

function startJoin(options: Partial<RouterJoinOptions> & { store: RegistrationStore<RouterRegistration> }, start = true) {
  const join = new RouterJoin({
    leaseMs: LONG_LEASE_MS,
    logger: silentLogger(),
    sweepIntervalMs: 20,
    dueGraceMs: 20,
    storeBackoff: { initialMs: 20, maxMs: 40 },
    ...options,
  });
  running.push(join);
  const events: RouterWatchEvent[] = [];
  join.view.subscribe((event) => events.push(structuredClone(event)));
  if (start) join.start();
  return { join, events };
}

/** Two regions: r1 (home) and r2 (followed), each its own store. */
function twoRegions(
  options: { now1?: () => number; now2?: () => number; followedName?: string; logger?: RouterJoinOptions['logger']; leaseMs?: number } = {},
) {
  const r1 = durableStore({ now: options.now1 });
  const r2 = durableStore({ now: options.now2 });
  const followed = options.followedName ?? 'r2';
  const { join, events } = startJoin({
    store: r1,
    regions: { home: 'r1', followed: [{ name: followed, store: r2 }], holdMs: HOLD_MS },
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { join, events, r1, r2 };
}

const router = (id: string, more: Partial<RouterRegistration> = {}): RouterRegistration => ({ id, url: `http://10.0.1.9:9100/${id}`, ...more });
const routersOf = (join: RouterJoin) => join.view.list().routers;

describe('RouterJoin in one region (no regions configured)', () => {
  it('lists a registered router with its url, region and zone, source registration, no lease_regions, and drops it when its lease lapses', async () => {
    const store = durableStore({ leaseMs: 300 });
    const { join, events } = startJoin({ store, leaseMs: 300 });
    await store.heartbeat(router('gr-b', { region: 'us-east-1', zone: 'us-east-1a' }));
    await store.heartbeat(router('gr-a'));
    await eventually(() =>
      expect(routersOf(join)).toStrictEqual([
        { id: 'gr-a', url: 'http://10.0.1.9:9100/gr-a', source: 'registration' },
        { id: 'gr-b', url: 'http://10.0.1.9:9100/gr-b', region: 'us-east-1', zone: 'us-east-1a', source: 'registration' },
      ]),
    );
    const list = join.view.list();
    expect(list.complete).toBe(true);
    expect(list).not.toHaveProperty('regions');
    expect(join.sourceStatuses()).toEqual([{ name: 'store', synced: true }]);
    expect(join.regionStatuses().map((s) => s.name)).toEqual(['']);
    const upserts = events.filter((e) => e.kind === 'upsert').map((e) => e.kind === 'upsert' && e.data.router.id);
    expect(upserts.sort()).toEqual(['gr-a', 'gr-b']);
    // No heartbeat since: the home store is swept and both leave, a delete each.
    await waitFor(() => routersOf(join).length === 0, { timeoutMs: 3000, message: 'both routers lapsed' });
    expect(events.filter((e) => e.kind === 'delete').map((e) => e.data.router)).toEqual(expect.arrayContaining([{ id: 'gr-a' }, { id: 'gr-b' }]));
  });

  it('is incomplete with "router store: not read yet" before it starts, and complete once the store is read', async () => {
    const store = durableStore();
    const { join } = startJoin({ store }, false);
    expect(join.view.complete).toBe(false);
    expect(join.view.reasons).toEqual(['router store: not read yet']);
    expect(join.sourceStatuses()).toEqual([{ name: 'store', synced: false, reason: 'router store: not read yet' }]);
    join.start();
    await waitFor(() => join.view.complete, { message: 'the store read' });
    expect(join.view.reasons).toEqual([]);
  });

  it('on a memory store, is incomplete for one lease after start (the warm-up, with its end in the reason), then complete', async () => {
    const leaseMs = 250;
    const store = createMemoryRouterStore({ leaseMs });
    stores.push(store);
    const before = Date.now();
    const { join } = startJoin({ store, leaseMs }, false);
    const warmup = join.sourceStatuses().find((s) => s.name === 'warmup');
    expect(warmup?.synced).toBe(false);
    const until = Date.parse(/missing until (\S+)$/.exec(warmup?.reason ?? '')?.[1] ?? '');
    expect(until).toBeGreaterThanOrEqual(before + leaseMs);
    expect(until).toBeLessThanOrEqual(Date.now() + leaseMs);
    expect(warmup?.reason).toMatch(/^memory store: router leases renewed before this replica started may be missing until /);
    join.start();
    await waitFor(() => join.sourceStatuses().find((s) => s.name === 'store')?.synced, { message: 'the store read' });
    // Read, but still within the warm-up: a router renewed before the start may be missing.
    expect(join.view.complete).toBe(false);
    expect(join.view.reasons).toEqual([warmup?.reason]);
    await waitFor(() => join.view.complete, { timeoutMs: leaseMs * 8, message: 'the warm-up over' });
    expect(Date.now() - before).toBeGreaterThanOrEqual(leaseMs - 5);
  });

  it('takes the warm-up from the clock it is given', () => {
    const store = createMemoryRouterStore({ leaseMs: 1000 });
    stores.push(store);
    const { join } = startJoin({ store, leaseMs: 1000, now: () => Date.parse('2030-01-01T00:00:00.000Z') }, false);
    expect(join.sourceStatuses().find((s) => s.name === 'warmup')?.reason).toMatch(/until 2030-01-01T00:00:01\.000Z$/);
  });

  it('a store that keeps its leases across restarts has no warm-up, before or after a lease has passed', async () => {
    const leaseMs = 60;
    const { join } = startJoin({ store: durableStore(), leaseMs }, false);
    expect(join.sourceStatuses().map((s) => s.name)).toEqual(['store']);
    join.start();
    const started = Date.now();
    await waitFor(() => Date.now() - started > leaseMs * 3 && join.view.complete, { intervalMs: 20 });
    expect(join.sourceStatuses()).toEqual([{ name: 'store', synced: true }]);
  });

  it("says the store's own reason while it cannot be read", async () => {
    const store = durableStore();
    store.setCut(true, new Error('redis store: connection refused'));
    const { join } = startJoin({ store });
    await waitFor(() => join.view.reasons.some((reason) => reason.includes('connection refused')), { message: "the store's reason" });
    expect(join.view.complete).toBe(false);
    expect(join.view.reasons.every((reason) => !reason.includes('not read yet'))).toBe(true);
  });

  it('stop() ends the warm-up timer: no source changes after it', async () => {
    const leaseMs = 120;
    const store = createMemoryRouterStore({ leaseMs });
    stores.push(store);
    const { join } = startJoin({ store, leaseMs });
    await waitFor(() => join.sourceStatuses().find((s) => s.name === 'store')?.synced, { message: 'the store read' });
    await join.stop();
    // A lease renewed after the stop is not listed (checked within its lease): the feeds stopped with it.
    await store.heartbeat(router('gr-late'));
    await throughout(80, 10, () => expect(routersOf(join)).toEqual([]));
    // Past the warm-up's end: its timer was cleared, so the warm-up source is still not synced.
    const started = Date.now();
    await waitFor(() => Date.now() - started > leaseMs * 2, { intervalMs: 20 });
    expect(join.sourceStatuses().find((s) => s.name === 'warmup')?.synced).toBe(false);
    expect(routersOf(join)).toEqual([]);
  });

  it('skips an entry this version cannot read, with one warning per key and content naming the router', async () => {
    const logs = captureLogs();
    const store = durableStore();
    // The key is the id the store was given; the content read back is another router's, or no router at all.
    await store.heartbeat(router('gr-a'), JSON.stringify(router('gr-b')));
    await store.heartbeat({ id: 'GR_C', url: 'http://10.0.1.9:9100' });
    await store.heartbeat(router('gr-ok'));
    const { join } = startJoin({ store, logger: logs.logger });
    await waitFor(() => join.view.complete);
    expect(routersOf(join).map((r) => r.id)).toEqual(['gr-ok']);
    const skipped = () => logs.warnings().filter((l) => l.msg === 'unreadable router entry skipped');
    expect(skipped().map((l) => l.router).sort()).toEqual(['GR_C', 'gr-a']);
    expect(skipped().every((l) => !('region' in l))).toBe(true);
    // Read again (its watch broken, so a new snapshot): the same entries are not warned of twice...
    const snapshots = store.snapshotCalls;
    store.breakWatches(new Error('connection reset'));
    await waitFor(() => store.snapshotCalls > snapshots && join.view.complete, { message: 'a second snapshot' });
    expect(skipped()).toHaveLength(2);
    // ...but a new content under the same key is.
    await store.heartbeat(router('gr-a'), JSON.stringify(router('gr-d')));
    await waitFor(() => skipped().length === 3, { message: 'the changed entry warned of' });
    expect(routersOf(join).map((r) => r.id)).toEqual(['gr-ok']);
  });

  it('the lapse of an entry it skipped changes nothing: no error, the list still complete', async () => {
    const logs = captureLogs();
    const store = durableStore({ leaseMs: 150 });
    const { join } = startJoin({ store, logger: logs.logger, leaseMs: 150 });
    await waitFor(() => join.view.complete);
    await store.heartbeat({ id: 'GR_C', url: 'http://10.0.1.9:9100' });
    // Its lapse is logged when the home store is swept (every 20 ms); the join reads it as any lapse.
    await throughout(500, 10, () => expect(join.view.reasons).toEqual([]));
    expect(await store.dueLapses()).toEqual([]);
    expect(join.view.complete).toBe(true);
    expect(logs.lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual(['unreadable router entry skipped']);
  });
});

describe('RouterJoin: static and MCS routers', () => {
  it('lists static routers (source static, zone only when given) before it starts and with no lease', () => {
    const { join, events } = startJoin(
      {
        store: durableStore(),
        staticRouters: [
          { id: 'gr-s', url: 'http://10.0.2.1:9100' },
          { id: 'gr-z', url: 'http://10.0.2.2:9100', zone: 'z1' },
        ],
      },
      false,
    );
    expect(routersOf(join)).toStrictEqual([
      { id: 'gr-s', url: 'http://10.0.2.1:9100', source: 'static' },
      { id: 'gr-z', url: 'http://10.0.2.2:9100', zone: 'z1', source: 'static' },
    ]);
    expect(events).toEqual([]);
  });

  it('a static router wins over a registration of the same id, whose lease changes nothing listed', async () => {
    const store = durableStore();
    const { join, events } = startJoin({ store, staticRouters: [{ id: 'gr-s', url: 'http://10.0.2.1:9100' }] });
    await store.heartbeat(router('gr-s', { region: 'r9' }));
    await store.heartbeat(router('gr-x'));
    await waitFor(() => routersOf(join).length === 2);
    expect(routersOf(join)).toEqual([
      { id: 'gr-s', url: 'http://10.0.2.1:9100', source: 'static' },
      { id: 'gr-x', url: 'http://10.0.1.9:9100/gr-x', source: 'registration' },
    ]);
    expect(events.filter((e) => e.kind !== 'resync').map((e) => e.kind === 'upsert' && e.data.router.id)).toEqual(['gr-x']);
  });

  it('lists the Global Router Service routers (source mcs); a registration of the same id wins, and when it lapses the MCS router is back', async () => {
    const store = durableStore({ leaseMs: 300 });
    const { join, events } = startJoin({ store, leaseMs: 300, mcs: true });
    join.setMcsRouters([
      { id: 'gr-m', url: 'http://10.0.3.1:9100', zone: 'z2' },
      { id: 'gr-n', url: 'http://10.0.3.2:9100' },
    ]);
    expect(routersOf(join)).toStrictEqual([
      { id: 'gr-m', url: 'http://10.0.3.1:9100', zone: 'z2', source: 'mcs' },
      { id: 'gr-n', url: 'http://10.0.3.2:9100', source: 'mcs' },
    ]);
    await store.heartbeat(router('gr-m'));
    await waitFor(() => routersOf(join)[0]?.source === 'registration', { message: 'the registration listed' });
    expect(routersOf(join)[0]).toStrictEqual({ id: 'gr-m', url: 'http://10.0.1.9:9100/gr-m', source: 'registration' });
    await waitFor(() => routersOf(join)[0]?.source === 'mcs', { timeoutMs: 3000, message: 'the lease lapsed' });
    expect(routersOf(join)[0]).toEqual({ id: 'gr-m', url: 'http://10.0.3.1:9100', zone: 'z2', source: 'mcs' });
    expect(events.filter((e) => e.kind === 'delete')).toEqual([]);
  });

  it('a new list from the slices changes only the routers that changed: one upsert, one delete', () => {
    const { join, events } = startJoin({ store: durableStore(), mcs: true }, false);
    join.setMcsRouters([
      { id: 'gr-1', url: 'http://10.0.3.1:9100' },
      { id: 'gr-2', url: 'http://10.0.3.2:9100' },
      { id: 'gr-3', url: 'http://10.0.3.3:9100' },
    ]);
    events.length = 0;
    join.setMcsRouters([
      { id: 'gr-1', url: 'http://10.0.3.1:9100' },
      { id: 'gr-2', url: 'http://10.0.3.2:9100', zone: 'z9' },
    ]);
    expect(events).toEqual([
      { kind: 'upsert', data: { revision: expect.any(String), router: { id: 'gr-2', url: 'http://10.0.3.2:9100', zone: 'z9', source: 'mcs' } } },
      { kind: 'delete', data: { revision: expect.any(String), router: { id: 'gr-3' } } },
    ]);
    expect(routersOf(join).map((r) => r.id)).toEqual(['gr-1', 'gr-2']);
  });

  it('in MCS modes, is incomplete until the slices are listed, with the source reason prefixed "kubernetes: "', async () => {
    const { join } = startJoin({ store: durableStore(), mcs: true });
    await waitFor(() => join.sourceStatuses().find((s) => s.name === 'store')?.synced);
    expect(join.view.complete).toBe(false);
    expect(join.view.reasons).toEqual(['kubernetes: Global Router EndpointSlices not listed yet']);
    join.setMcsStatus(true);
    expect(join.view.complete).toBe(true);
    expect(join.sourceStatuses().find((s) => s.name === 'kubernetes')).toEqual({ name: 'kubernetes', synced: true });
    join.setMcsStatus(false, 'watch of EndpointSlices failed: 403');
    expect(join.view.complete).toBe(false);
    expect(join.view.reasons).toEqual(['kubernetes: watch of EndpointSlices failed: 403']);
  });

  it('without MCS, the slices status is not a source: nothing it says makes the list incomplete', async () => {
    const { join } = startJoin({ store: durableStore() });
    await waitFor(() => join.view.complete);
    join.setMcsStatus(false, 'not listed');
    expect(join.view.complete).toBe(true);
    expect(join.sourceStatuses().map((s) => s.name)).toEqual(['store']);
  });
});

describe('RouterJoin across regions', () => {
  it('lists a router leased in two regions once, with its lease regions sorted, and every region entry', async () => {
    const { join, r1, r2 } = twoRegions();
    await r1.heartbeat(router('gr-a', { url: 'http://10.0.1.1:9100' }));
    await r2.heartbeat(router('gr-a', { url: 'http://10.0.1.1:9100' }));
    await r2.heartbeat(router('gr-b'));
    await eventually(() =>
      expect(routersOf(join)).toEqual([
        { id: 'gr-a', url: 'http://10.0.1.1:9100', source: 'registration', lease_regions: ['r1', 'r2'] },
        { id: 'gr-b', url: 'http://10.0.1.9:9100/gr-b', source: 'registration', lease_regions: ['r2'] },
      ]),
    );
    await waitFor(() => join.view.complete);
    expect(join.view.list().regions).toEqual([
      { name: 'r1', complete: true, dropped: false },
      { name: 'r2', complete: true, dropped: false },
    ]);
    expect(join.sourceStatuses().map((s) => s.name)).toEqual(['region:r1', 'region:r2']);
  });

  it('shows the registration whose content changed last; of two changed at the same time, the region that sorts first', async () => {
    const clock = { r1: 1_000_000, r2: 1_000_000 };
    const { join, r1, r2 } = twoRegions({ now1: () => clock.r1, now2: () => clock.r2 });
    // r2's lease is seen first; then r1's, changed at the same time: r1 sorts first, and so do the lease regions.
    await r2.heartbeat(router('gr-a', { url: 'http://10.0.0.2:1', zone: 'from-r2' }));
    await waitFor(() => routersOf(join)[0]?.zone === 'from-r2');
    await r1.heartbeat(router('gr-a', { url: 'http://10.0.0.1:1', zone: 'from-r1' }));
    await waitFor(() => routersOf(join)[0]?.lease_regions?.length === 2);
    expect(routersOf(join)[0]).toStrictEqual({ id: 'gr-a', url: 'http://10.0.0.1:1', zone: 'from-r1', source: 'registration', lease_regions: ['r1', 'r2'] });
    // And seen in the other order: r1's first, then r2's changed at the same time: still r1's.
    await r1.heartbeat(router('gr-b', { url: 'http://10.0.0.1:2' }));
    await waitFor(() => routersOf(join)[1]?.id === 'gr-b');
    await r2.heartbeat(router('gr-b', { url: 'http://10.0.0.2:2' }));
    await waitFor(() => routersOf(join)[1]?.lease_regions?.length === 2);
    expect(routersOf(join)[1]).toMatchObject({ id: 'gr-b', url: 'http://10.0.0.1:2', lease_regions: ['r1', 'r2'] });
    // r2's content changes later: r2's is shown.
    clock.r2 += 10;
    await r2.heartbeat(router('gr-a', { url: 'http://10.0.0.2:1', zone: 'from-r2 again' }));
    await waitFor(() => routersOf(join)[0]?.zone === 'from-r2 again', { message: "r2's later change shown" });
    // A renewal in r1 without a change keeps r1's older change time: r2's still shown.
    clock.r1 += 20;
    await r1.heartbeat(router('gr-a', { url: 'http://10.0.0.1:1', zone: 'from-r1' }));
    clock.r1 += 1;
    await r1.heartbeat(router('gr-z'));
    await waitFor(() => routersOf(join).length === 3);
    expect(routersOf(join)[0]).toMatchObject({ url: 'http://10.0.0.2:1', zone: 'from-r2 again' });
    // r1's content changes later still: r1's is shown.
    await r1.heartbeat(router('gr-a', { url: 'http://10.0.0.1:1', zone: 'from-r1 later' }));
    await waitFor(() => routersOf(join)[0]?.zone === 'from-r1 later', { message: "r1's later change shown" });
  });

  it('sorts its regions by name, the home region among them', () => {
    const { join } = twoRegions({ followedName: 'a-region' });
    expect(join.regionStatuses().map((s) => s.name)).toEqual(['a-region', 'r1']);
    expect(join.sourceStatuses().map((s) => s.name)).toEqual(['region:a-region', 'region:r1']);
    expect(join.view.reasons).toEqual(['region a-region: router store: not read yet', 'region r1: router store: not read yet']);
    const followed = ['r3', 'r1', 'r0', 'r4'].map((name) => ({ name, store: durableStore() }));
    const { join: five } = startJoin({ store: durableStore(), regions: { home: 'r2', followed, holdMs: HOLD_MS } }, false);
    expect(five.regionStatuses().map((s) => s.name)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('names the region of an entry it cannot read', async () => {
    const logs = captureLogs();
    const { join, r2 } = twoRegions({ logger: logs.logger });
    await r2.heartbeat({ id: 'GR_C', url: 'http://10.0.1.9:9100' });
    await waitFor(() => logs.warnings().some((l) => l.msg === 'unreadable router entry skipped'), { message: 'the warning' });
    expect(logs.warnings().filter((l) => l.msg === 'unreadable router entry skipped')).toEqual([
      expect.objectContaining({ router: 'GR_C', region: 'r2' }),
    ]);
    expect(routersOf(join)).toEqual([]);
  });

  it('retries a followed region that could not be read after 250 ms, not the default 0.8 s', async () => {
    const r1 = durableStore();
    const r2 = durableStore();
    r2.failSnapshots = [new Error('read failed')];
    const { join } = startJoin({ store: r1, regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs: 5000 }, storeBackoff: undefined });
    await waitFor(() => join.view.complete, { message: 'r2 read on its second try' });
    const [first, second] = r2.snapshotTimes;
    expect(second! - first!).toBeGreaterThanOrEqual(245);
    expect(second! - first!).toBeLessThan(800);
  });

  it('holds a followed region that cannot be read, then drops its routers (a delete each) and keeps the leases of other regions', async () => {
    const { join, r1, r2, events } = twoRegions();
    await r1.heartbeat(router('gr-both'));
    await r2.heartbeat(router('gr-both'));
    await r2.heartbeat(router('gr-r2'));
    await waitFor(() => routersOf(join).length === 2 && join.view.complete);
    r2.setCut(true);
    await waitFor(() => join.view.list().regions?.find((r) => r.name === 'r2')?.complete === false, { message: 'r2 held' });
    // Held: still listed, the list incomplete, the reason naming the region.
    expect(routersOf(join).map((r) => r.id)).toEqual(['gr-both', 'gr-r2']);
    expect(join.view.reasons.some((reason) => reason.startsWith('region r2: '))).toBe(true);
    await waitFor(() => join.view.list().regions?.find((r) => r.name === 'r2')?.dropped === true, { timeoutMs: 3000, message: 'r2 dropped' });
    expect(routersOf(join)).toEqual([{ id: 'gr-both', url: 'http://10.0.1.9:9100/gr-both', source: 'registration', lease_regions: ['r1'] }]);
    expect(events.filter((e) => e.kind === 'delete').map((e) => e.data.router.id)).toEqual(['gr-r2']);
    // Readable again: its routers are back.
    r2.setCut(false);
    await waitFor(() => routersOf(join).length === 2 && join.view.complete, { timeoutMs: 3000, message: 'r2 read again' });
    expect(routersOf(join).map((r) => [r.id, r.lease_regions])).toEqual([
      ['gr-both', ['r1', 'r2']],
      ['gr-r2', ['r2']],
    ]);
  });

  it('a snapshot removes the routers its region no longer holds, except while a store that lost its data is refilled', async () => {
    // The join's lease (how long a refill lasts) short; the stores' long.
    const { join, r1, r2 } = twoRegions({ leaseMs: 800 });
    await r1.heartbeat(router('gr-1'));
    await r2.heartbeat(router('gr-1'));
    await r2.heartbeat(router('gr-gone'));
    await waitFor(() => routersOf(join).length === 2 && join.view.complete);
    // r2's Redis lost its data: a new one (another epoch) holds gr-1 again, renewed, and not gr-gone.
    const fresh = createMemoryRouterStore({ leaseMs: LONG_LEASE_MS });
    stores.push(fresh);
    await fresh.heartbeat(router('gr-1'));
    const snapshots = r2.snapshotCalls;
    r2.inner = fresh;
    r2.breakWatches(new Error('connection reset'));
    await waitFor(() => r2.snapshotCalls > snapshots && join.regionStatuses().find((s) => s.name === 'r2')?.refillUntilMs !== undefined, {
      message: 'the refill begun',
    });
    // Refilled for one lease: what the new store lacks is kept meanwhile.
    expect(routersOf(join).map((r) => [r.id, r.lease_regions])).toEqual([
      ['gr-1', ['r1', 'r2']],
      ['gr-gone', ['r2']],
    ]);
    // Once the refill is over, the next snapshot decides: gr-gone goes, gr-1 keeps both regions.
    await waitFor(() => routersOf(join).length === 1, { timeoutMs: 3000, message: 'gr-gone removed after the refill' });
    expect(routersOf(join)).toEqual([{ id: 'gr-1', url: 'http://10.0.1.9:9100/gr-1', source: 'registration', lease_regions: ['r1', 'r2'] }]);
  });

  it("logs the routers' feed warnings (lease_kind routers) only at debug: the pools' feed of the region already says them", async () => {
    for (const level of ['info', 'debug'] as const) {
      const logs = captureLogs(level);
      const { join, r2 } = twoRegions({ logger: logs.logger });
      await waitFor(() => join.view.complete);
      r2.setCut(true);
      await waitFor(() => join.view.list().regions?.find((r) => r.name === 'r2')?.dropped === true, { timeoutMs: 3000, message: 'r2 dropped' });
      const held = logs.warnings().filter((l) => l.msg === 'region cannot be read; holding its pools');
      if (level === 'info') expect(held).toEqual([]);
      else expect(held).toEqual([expect.objectContaining({ lease_kind: 'routers', region: 'r2' })]);
      await join.stop();
    }
  });

  it("a followed region's due lapse clears a lease only if it is not renewed past it", async () => {
    const dueFrom = new Map<string, DueLapse[]>();
    class StaleDueStore extends DelegatingStore<RouterRegistration> {
      override async dueLapses(graceMs?: number): Promise<DueLapse[]> {
        const scripted = dueFrom.get('next');
        if (scripted) {
          dueFrom.delete('next');
          return scripted;
        }
        return super.dueLapses(graceMs);
      }
    }
    const r1 = durableStore();
    const r2 = new StaleDueStore(createMemoryRouterStore({ leaseMs: LONG_LEASE_MS }), { forgetsOnRestart: false });
    stores.push(r2);
    const { join } = startJoin({ store: r1, regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs: HOLD_MS } });
    await r2.heartbeat(router('gr-a'));
    await waitFor(() => routersOf(join).length === 1 && join.view.complete);
    const deadline = (await r2.snapshot()).records[0]!.deadlineMs;
    // A due entry from before the lease's deadline (it was renewed since): nothing changes.
    dueFrom.set('next', [{ key: 'gr-a', atMs: deadline - 1 }]);
    await waitFor(() => !dueFrom.has('next'), { message: 'the stale due read' });
    expect(routersOf(join).map((r) => r.id)).toEqual(['gr-a']);
    // A due entry at its deadline, and one of a key this replica never saw: the lease goes, nothing else.
    dueFrom.set('next', [
      { key: 'gr-unknown', atMs: deadline },
      { key: 'gr-a', atMs: deadline },
    ]);
    await waitFor(() => routersOf(join).length === 0, { message: 'the lease cleared by its due lapse' });
  });
});

describe('ROUTER_SHAPE', () => {
  it('shapes the list with regions only when there are some, and the events with an empty revision for the view to fill', () => {
    const routers = [{ id: 'gr-a', url: 'http://x', source: 'static' as const }];
    const regions = [{ name: 'r1', complete: true, dropped: false }];
    expect(ROUTER_SHAPE.list({ complete: true, revision: '7', regions }, routers)).toEqual({ complete: true, revision: '7', routers, regions });
    expect(ROUTER_SHAPE.list({ complete: false, revision: '8' }, routers)).toEqual({ complete: false, revision: '8', routers });
    expect(Object.keys(ROUTER_SHAPE.list({ complete: false, revision: '8' }, routers))).toEqual(['complete', 'revision', 'routers']);
    expect(ROUTER_SHAPE.upsert(routers[0]!)).toEqual({ kind: 'upsert', data: { revision: '', router: routers[0] } });
    expect(ROUTER_SHAPE.remove({ id: 'gr-a' } as never)).toEqual({ kind: 'delete', data: { revision: '', router: { id: 'gr-a' } } });
    expect(ROUTER_SHAPE.filterOf({ ...routers[0]!, region: 'eu' })).toBe('eu');
    expect(ROUTER_SHAPE.filterOf(routers[0]!)).toBe('');
  });
});
