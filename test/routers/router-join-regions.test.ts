// The routers' join across regions (docs/contract.md §9, §10, docs/design.md "Routers"): a router's lease
// regions and which region's registration is shown, each region's entry, a followed region retried, held
// then dropped and refilled, stale due lapses, and the list's and events' shape. In one region:
// router-join.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { RouterRegistration } from '../../src/contract/index.js';
import { ROUTER_SHAPE } from '../../src/join/router-join.js';
import { createMemoryRouterStore } from '../../src/store/memory.js';
import type { DueLapse } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs } from '../support/logs.js';
import { eventually, waitFor } from '../support/wait.js';
import { closedAfterTest, durableStore, HOLD_MS, LONG_LEASE_MS, router, routersOf, startJoin, stopAll, twoRegions } from './router-join-support.js';

afterEach(stopAll);

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

  it('retries a followed region that could not be read after 250 ms (not the default 0.8 s), doubling to 1 s (not the store\'s 2 s)', async () => {
    const r1 = durableStore();
    const r2 = durableStore();
    r2.failSnapshots = [1, 2, 3, 4].map((n) => new Error(`read failed (${n})`));
    const { join } = startJoin({ store: r1, regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs: 10_000 }, storeBackoff: undefined });
    await waitFor(() => join.view.complete, { message: 'r2 read on its fifth try', timeoutMs: 10_000 });
    const gaps = r2.snapshotTimes.slice(1, 5).map((t, i) => t - r2.snapshotTimes[i]!);
    // 250, 500, 1000 ms, each up to a fifth more at random, and at the cap 1000 ms exactly; the store's own
    // backoff would wait 1.6-2 s the fourth time.
    expect(gaps[0]).toBeGreaterThanOrEqual(245);
    expect(gaps[0]).toBeLessThan(800);
    expect(gaps[3]).toBeGreaterThanOrEqual(995);
    expect(gaps[3]).toBeLessThan(1550);
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

  it('a dropped region read again from its log: its routers back, but one whose lease ran out meanwhile, and no snapshot read', async () => {
    const clock = { r2: 1_000_000 };
    const { join, r1, r2, events } = twoRegions({ now2: () => clock.r2 });
    for (const id of ['gr-both', 'gr-r1']) await r1.heartbeat(router(id));
    for (const id of ['gr-both', 'gr-r2', 'gr-dies']) await r2.heartbeat(router(id));
    await waitFor(() => routersOf(join).length === 4 && join.view.complete);
    r2.setCut(true);
    await waitFor(() => join.view.list().regions?.find((r) => r.name === 'r2')?.dropped === true, { timeoutMs: 3000, message: 'r2 dropped' });
    expect(routersOf(join).map((r) => [r.id, r.lease_regions])).toEqual([
      ['gr-both', ['r1']],
      ['gr-r1', ['r1']],
    ]);
    // While r2 is cut off its clock passes every lease; its routers renew theirs, but gr-dies.
    clock.r2 += LONG_LEASE_MS + 1000;
    for (const id of ['gr-both', 'gr-r2']) await r2.heartbeat(router(id));
    const reads = r2.snapshotCalls;
    events.length = 0;
    r2.setCut(false);
    await waitFor(() => join.view.list().regions?.find((r) => r.name === 'r2')?.complete === true, { timeoutMs: 3000, message: 'r2 read again' });
    expect(routersOf(join).map((r) => [r.id, r.lease_regions])).toEqual([
      ['gr-both', ['r1', 'r2']],
      ['gr-r1', ['r1']],
      ['gr-r2', ['r2']],
    ]);
    expect(r2.snapshotCalls).toBe(reads);
    // gr-dies never came back, not even until the next due read (the others came back, and then their
    // leases begun anew while r2 was cut off came from its log).
    const upserted = new Set(events.filter((e) => e.kind === 'upsert').map((e) => e.data.router.id));
    expect([...upserted].sort()).toEqual(['gr-both', 'gr-r2']);
  });

  it('a region read again from its log before its drop took anything keeps its routers as they are', async () => {
    const { join, r2, events } = twoRegions();
    await r2.heartbeat(router('gr-r2'));
    await waitFor(() => routersOf(join).length === 1 && join.view.complete);
    r2.setCut(true);
    await waitFor(() => join.view.list().regions?.find((r) => r.name === 'r2')?.complete === false, { message: 'r2 held' });
    events.length = 0;
    r2.setCut(false);
    await waitFor(() => join.view.list().regions?.find((r) => r.name === 'r2')?.complete === true, { timeoutMs: 3000, message: 'r2 read again' });
    expect(routersOf(join).map((r) => r.id)).toEqual(['gr-r2']);
    expect(events.filter((e) => e.kind !== 'resync')).toEqual([]);
  });

  it('a snapshot removes the routers its region no longer holds, except while a store that lost its data is refilled', async () => {
    // The join's lease (how long a refill lasts) short; the stores' long.
    const { join, r1, r2 } = twoRegions({ leaseMs: 800 });
    await r1.heartbeat(router('gr-1'));
    await r2.heartbeat(router('gr-1'));
    await r2.heartbeat(router('gr-gone'));
    await waitFor(() => routersOf(join).length === 2 && join.view.complete);
    // r2's Redis lost its data: a new one (another epoch) holds gr-1 again, renewed, and not gr-gone.
    const fresh = closedAfterTest(createMemoryRouterStore({ leaseMs: LONG_LEASE_MS }));
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
    const r2 = closedAfterTest(new StaleDueStore(createMemoryRouterStore({ leaseMs: LONG_LEASE_MS }), { forgetsOnRestart: false }));
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
    // A delete names the router by its id alone, whatever the listed router held.
    expect(ROUTER_SHAPE.remove({ ...routers[0]!, zone: 'z1', region: 'eu' })).toStrictEqual({ kind: 'delete', data: { revision: '', router: { id: 'gr-a' } } });
    expect(ROUTER_SHAPE.filterOf({ ...routers[0]!, region: 'eu' })).toBe('eu');
    expect(ROUTER_SHAPE.filterOf(routers[0]!)).toBe('');
  });
});
