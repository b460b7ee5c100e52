// A followed region's snapshot applied as it is read (docs/design.md "Snapshots applied as read"): the
// leases a read hands over are applied and published (an upsert each, one revision a part) while the
// rest is read, and the settled snapshot corrects them: a lease changed since is applied again, one gone
// lapses, one unchanged is not applied twice. The home region's store is read whole. The stores are real
// memory stores; only the reads' parts are played by the test, at the moments it chooses.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { poolKey, type WatchEvent } from '../../src/contract/index.js';
import { Join } from '../../src/join/join.js';
import type { RegionLeases } from '../../src/join/region-leases.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError, StoreUnavailableError, type LeaseRecord } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually } from '../support/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const pool = (i: number) => registration({ name: `pool-${i}` });
const names = (join: Join) => join.view.list().pools.map((p) => p.name).sort();

/** A home region r1 (empty) and a followed r2 holding `pools`; not started. */
async function started(pools: number) {
  const home = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
  const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
  for (let i = 0; i < pools; i += 1) await store.heartbeat(pool(i));
  const join = new Join({
    poolDiscovery: 'registrations',
    leaseMs: 60_000,
    store: home,
    regions: { home: 'r1', followed: [{ name: 'r2', store }], holdMs: 60_000 },
    logger: silentLogger(),
    storeBackoff: { initialMs: 20, maxMs: 40 },
  });
  cleanups.push(() => join.stop());
  const events: WatchEvent[] = [];
  join.view.subscribe((event) => events.push(event));
  const upserts = vi.spyOn(join.directory, 'send');
  const leaseUpserts = () => upserts.mock.calls.filter(([, event]) => event.type === 'LEASE_UPSERT').map(([key]) => key);
  /** Within a read of r2: once r1 was read, what was published so far is forgotten (r1's own resyncs). */
  const afterHome = async () => {
    await eventually(() => expect(join.view.list().regions?.find((r) => r.name === 'r1')?.complete).toBe(true));
    events.length = 0;
  };
  return { home, store, join, events, leaseUpserts, afterHome };
}

describe('Join: a store snapshot applied as it is read', () => {
  it('applies and publishes each part as it comes, under one revision a part, and applies an unchanged lease once', async () => {
    const { store, join, events, leaseUpserts, afterHome } = await started(6);
    const seen: Array<{ size: number; complete: boolean }> = [];
    store.readScripts.push(async (full, onRead) => {
      expect(onRead).toBeTypeOf('function');
      await afterHome();
      for (let part = 0; part < 3; part += 1) {
        onRead!(full.records.slice(part * 2, part * 2 + 2));
        await nextTurn();
        seen.push({ size: join.view.size, complete: join.view.complete });
      }
      return full;
    });
    join.start();
    await eventually(() => expect(join.view.complete).toBe(true));

    expect(seen).toEqual([
      { size: 2, complete: false },
      { size: 4, complete: false },
      { size: 6, complete: false },
    ]);
    // An upsert per pool as its part was applied, one revision a part; then the settled snapshot's resync
    // (nothing left to apply), and one when complete.
    expect(events.map((e) => e.kind)).toEqual([...Array<string>(6).fill('upsert'), 'resync', 'resync']);
    const revisions = events.slice(0, 6).map((e) => e.data.revision);
    expect(revisions[0]).toBe(revisions[1]);
    expect(revisions[2]).toBe(revisions[3]);
    expect(new Set(revisions).size).toBe(3);
    expect(events[6]!.kind === 'resync' && events[6]!.data.pools).toHaveLength(6);
    // Every lease applied once: the settled snapshot holds the same objects, so none is applied again.
    expect(leaseUpserts().sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => poolKey(pool(i))).sort());
  });

  it('applies a lease changed after it was handed over again, and lapses one the read found gone', async () => {
    const { store, join, events, afterHome } = await started(3);
    store.readScripts.push(async (full, onRead) => {
      await afterHome();
      onRead!(full.records);
      await nextTurn();
      // As the log read after the scan says: pool-0 changed (a new record), pool-1 lapsed.
      const changed = full.records.map((r): LeaseRecord =>
        r.registration.name === 'pool-0' ? { ...r, registration: { ...r.registration, model: 'changed' }, version: r.version + 1 } : r,
      );
      return { ...full, records: changed.filter((r) => r.registration.name !== 'pool-1') };
    });
    join.start();
    await eventually(() => expect(join.view.complete).toBe(true));

    expect(names(join)).toEqual(['pool-0', 'pool-2']);
    expect(join.view.list().pools.find((p) => p.name === 'pool-0')?.model).toBe('changed');
    expect(join.directory.get(poolKey(pool(1)))?.getSnapshot().value).toBe('lapsed');
    // Watchers saw what the read handed over, then the settled state in one resync.
    expect(events.map((e) => e.kind)).toEqual(['upsert', 'upsert', 'upsert', 'resync', 'resync']);
    expect(events[3]!.kind === 'resync' && events[3]!.data.pools.map((p) => [p.name, p.model])).toEqual([
      ['pool-0', 'changed'],
      ['pool-2', registration().model],
    ]);
  });

  it('while a refill holds missing pools, still lapses a lease the read handed over and then found gone', async () => {
    const { store, join } = await started(2);
    join.start();
    await eventually(() => expect(join.view.complete).toBe(true));
    await store.heartbeat(pool(5));
    await eventually(() => expect(names(join)).toEqual(['pool-0', 'pool-1', 'pool-5']));
    await store.heartbeat(pool(9));
    // The next read finds a new epoch (the store lost its data): pools it lacks are held (pool-1, pool-5),
    // but pool-9, handed over by this very read and then found gone, lapses.
    store.readScripts.push(async (full, onRead) => {
      onRead!(full.records.filter((r) => ['pool-0', 'pool-9'].includes(r.registration.name)));
      await nextTurn();
      store.epoch = 'another';
      return { ...full, records: full.records.filter((r) => r.registration.name === 'pool-0') };
    });
    store.breakWatches(new PositionLostError('0-0'));
    await eventually(() => expect(join.directory.get(poolKey(pool(9)))?.getSnapshot().value).toBe('lapsed'));
    expect(names(join)).toEqual(['pool-0', 'pool-1', 'pool-5']);
  });

  it('keeps what a failed read applied, then reads the store again', async () => {
    const { store, join, events, afterHome } = await started(4);
    store.readScripts.push(async (full, onRead) => {
      await afterHome();
      onRead!(full.records.filter((r) => ['pool-0', 'pool-1'].includes(r.registration.name)));
      await nextTurn();
      throw new StoreUnavailableError('redis store: the link went away');
    });
    join.start();
    await eventually(() => expect(store.snapshotCalls).toBeGreaterThanOrEqual(2));
    await eventually(() => expect(join.view.complete).toBe(true));
    expect(names(join)).toEqual(['pool-0', 'pool-1', 'pool-2', 'pool-3']);
    // The failed read's two upserts; the read that settled, with nothing new, a resync; complete, another.
    expect(events.map((e) => e.kind)).toEqual(['upsert', 'upsert', 'resync', 'resync']);
  });

  it('shows the leases a failed read applied while the store is unread', async () => {
    const { store, join } = await started(3);
    let failed!: () => void;
    const failedRead = new Promise<void>((resolve) => (failed = resolve));
    store.readScripts.push(async (full, onRead) => {
      onRead!(full.records.filter((r) => r.registration.name === 'pool-2'));
      // Every later read fails before handing anything over.
      store.failSnapshots.push(...Array.from({ length: 50 }, () => new StoreUnavailableError('redis store: still away')));
      failed();
      throw new StoreUnavailableError('redis store: the link went away');
    });
    join.start();
    await failedRead;
    await eventually(() => expect(names(join)).toEqual(['pool-2']));
    expect(join.view.complete).toBe(false);
  });
});

describe('Join: the home region read whole', () => {
  it('takes no leases as they are read: its store is near, and its parts would only cost pollers bodies', async () => {
    const { home, join } = await started(0);
    await home.heartbeat(pool(1));
    const asked: unknown[] = [];
    home.readScripts.push(async (full, onRead) => {
      asked.push(onRead);
      return full;
    });
    join.start();
    await eventually(() => expect(join.view.complete).toBe(true));
    expect(asked).toEqual([undefined]);
    expect(names(join)).toEqual(['pool-1']);
  });
});

describe('Join: a followed region read as it is dropped', () => {
  const HOLD_MS = 300;
  const inRegion = (i: number) => registration({ cluster_id: 'c2', namespace: 'llm', name: `r2-${i}` });

  async function regions(pools: number, applyBatchSize?: number, holdMs = HOLD_MS) {
    const r1 = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    const r2 = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    const join = new Join({
      poolDiscovery: 'registrations',
      leaseMs: 60_000,
      store: r1,
      regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs },
      logger: silentLogger(),
      sweepIntervalMs: 20,
      dueGraceMs: 20,
      storeBackoff: { initialMs: 20, maxMs: 40 },
      applyBatchSize,
    });
    cleanups.push(() => join.stop());
    for (let i = 0; i < pools; i += 1) await r2.heartbeat(inRegion(i));
    join.start();
    await eventually(() => expect(join.view.complete).toBe(true));
    expect(join.view.size).toBe(pools);
    const r2Entry = () => join.view.list().regions?.find((r) => r.name === 'r2');
    return { join, r2, r2Entry };
  }

  it('a read that begins and fails while the drop is under way does not stop it', async () => {
    const { join, r2, r2Entry } = await regions(50, 1);
    const leases = (join as unknown as { leases: RegionLeases }).leases;
    let read = false;
    join.view.subscribe((event) => {
      if (event.kind !== 'delete' || read) return;
      read = true;
      // The feed's retry, as it comes between two batches of the drop: it begins, hands nothing, fails.
      leases.reading('r2', Number.MAX_SAFE_INTEGER).abandon();
    });
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(r2Entry()?.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    expect(read).toBe(true);
    expect(join.view.size).toBe(0);
  });

  it('a read of a dropped region that fails after handing leases over drops them again', async () => {
    const { join, r2, r2Entry } = await regions(4);
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(r2Entry()?.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    let handed!: () => void;
    const wasHanded = new Promise<void>((resolve) => (handed = resolve));
    r2.setCut(false);
    // Its log no longer reaches back to where it was left: the region is read from a snapshot.
    r2.failWatches.push(new PositionLostError('0'));
    r2.readScripts.push(async (full, onRead) => {
      onRead!(full.records.slice(0, 2));
      await nextTurn();
      // Listed while the read runs: applied as read.
      expect(join.view.size).toBe(2);
      // Every later read fails before handing anything over.
      r2.failSnapshots.push(...Array.from({ length: 1000 }, () => new StoreUnavailableError('redis store: away again')));
      handed();
      throw new StoreUnavailableError('redis store: away again');
    });
    await wasHanded;
    await eventually(() => expect(r2.snapshotCalls).toBeGreaterThanOrEqual(4));
    expect(join.view.size).toBe(0);
    expect(r2Entry()?.dropped).toBe(true);
    expect(join.directory.get(poolKey(inRegion(0)))?.getSnapshot().context.leases.r2).toBeUndefined();
  });

  it('a read of a held region that fails after handing leases over keeps them, with the region held', async () => {
    const { join, r2, r2Entry } = await regions(2, undefined, 60_000);
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(r2Entry()?.complete).toBe(false));
    await r2.inner.heartbeat(inRegion(7));
    let handed!: () => void;
    const wasHanded = new Promise<void>((resolve) => (handed = resolve));
    r2.setCut(false);
    // Its log no longer reaches back to where it was left: the region is read from a snapshot.
    r2.failWatches.push(new PositionLostError('0'));
    r2.readScripts.push(async (full, onRead) => {
      onRead!(full.records.filter((r) => r.registration.name === 'r2-7'));
      await nextTurn();
      r2.failSnapshots.push(...Array.from({ length: 1000 }, () => new StoreUnavailableError('redis store: away again')));
      handed();
      throw new StoreUnavailableError('redis store: away again');
    });
    await wasHanded;
    await eventually(() => expect(r2.snapshotCalls).toBeGreaterThanOrEqual(4));
    expect(join.view.list().pools.map((p) => p.name).sort()).toEqual(['r2-0', 'r2-1', 'r2-7']);
    expect(r2Entry()).toMatchObject({ complete: false, dropped: false });
  });

  it('a drop that comes while a read is under way: the settled snapshot applies every lease again', async () => {
    const { join, r2, r2Entry } = await regions(20);
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(r2Entry()?.complete).toBe(false));
    r2.setCut(false);
    r2.readScripts.push(async (full, onRead) => {
      onRead!(full.records);
      // The hold runs out while the read is under way: the drop reaches what the read applied.
      await eventually(() => expect(r2Entry()?.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
      return full;
    });
    await eventually(() => expect(r2Entry()).toEqual({ name: 'r2', complete: true, dropped: false }), { timeoutMs: HOLD_MS + 3000 });
    expect(join.view.size).toBe(20);
  });
});
