// The routers' join in one region (docs/contract.md §10, docs/design.md "Routers"): who lists a router
// (static, then registered, then MCS), its fields, the list's completeness and reasons (the store, the
// memory store's warm-up, the Global Router Service's slices), entries this version cannot read, and the
// view's events. Across regions: router-join-regions.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRouterStore } from '../../src/store/memory.js';
import { PositionLostError } from '../../src/store/types.js';
import { captureLogs } from '../support/logs.js';
import { eventually, throughout, waitFor } from '../support/wait.js';
import { closedAfterTest, durableStore, router, routersOf, startJoin, stopAll } from './router-join-support.js';

afterEach(stopAll);

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
    const store = closedAfterTest(createMemoryRouterStore({ leaseMs }));
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
    const store = closedAfterTest(createMemoryRouterStore({ leaseMs: 1000 }));
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
    const store = closedAfterTest(createMemoryRouterStore({ leaseMs }));
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
    // Read again (its log lost, so a new snapshot): the same entries are not warned of twice...
    const snapshots = store.snapshotCalls;
    store.breakWatches(new PositionLostError('0'));
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
