// The join across regions (docs/contract.md §7), over real memory stores, one per region: the union of
// every region's leases, one answer for a key held in two regions, a followed region held and then
// dropped while it cannot be read (other regions untouched), its return, lapses of a region nobody
// sweeps, and a home region that is never dropped.
import { afterEach, describe, expect, it } from 'vitest';
import { poolKey, type PoolList, type WatchEvent } from '../../src/contract/index.js';
import { Join } from '../../src/join/join.js';
import type { RegionLeases } from '../../src/join/region-leases.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError, StoreUnavailableError } from '../../src/store/types.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually, throughout, waitFor } from '../support/wait.js';
import { DelegatingStore } from '../support/delegating-store.js';

const LEASE_MS = 400;
const HOLD_MS = 300;
const running: Array<{ join: Join; stores: DelegatingStore[] }> = [];
afterEach(async () => {
  for (const { join, stores } of running.splice(0)) {
    await join.stop();
    for (const store of stores) await store.close();
  }
});

/** Regions r1 (home) and r2 (followed); leases long enough not to lapse unless a test wants them to. */
function startRegions(options: { leaseMs?: number; applyBatchSize?: number; changeLogCap?: number } = {}) {
  const leaseMs = options.leaseMs ?? 60_000;
  const r1 = new DelegatingStore(createMemoryStore({ leaseMs }), { forgetsOnRestart: false });
  const r2 = new DelegatingStore(createMemoryStore({ leaseMs, changeLogCap: options.changeLogCap }), { forgetsOnRestart: false });
  const join = new Join({
    poolDiscovery: 'registrations',
    leaseMs,
    store: r1,
    regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs: HOLD_MS },
    logger: silentLogger(),
    sweepIntervalMs: 20,
    dueGraceMs: 20,
    storeBackoff: { initialMs: 20, maxMs: 40 },
    applyBatchSize: options.applyBatchSize,
  });
  running.push({ join, stores: [r1, r2] });
  const events: WatchEvent[] = [];
  join.view.subscribe((event) => events.push(structuredClone(event)));
  join.start();
  return { join, r1, r2, events };
}

const A = registration({ cluster_id: 'c1', namespace: 'llm', name: 'pool-a' });
const B = registration({ cluster_id: 'c2', namespace: 'llm', name: 'pool-b' });
const SHARED = registration({ cluster_id: 'c3', namespace: 'llm', name: 'shared' });
const list = (join: Join): PoolList => join.view.list();
const leaseRegionsOf = (join: Join) => Object.fromEntries(list(join).pools.map((p) => [p.name, p.lease_regions]));
const region = (join: Join, name: string) => list(join).regions?.find((r) => r.name === name);

describe('Join across regions', () => {
  it('lists the union of every region, each pool with its lease regions, and every region entry', async () => {
    const { join, r1, r2 } = startRegions();
    await r1.heartbeat(A);
    await r2.heartbeat(B);
    await eventually(() => expect(leaseRegionsOf(join)).toEqual({ 'pool-a': ['r1'], 'pool-b': ['r2'] }));
    await eventually(() => expect(list(join).complete).toBe(true));
    expect(list(join).regions).toEqual([
      { name: 'r1', complete: true, dropped: false },
      { name: 'r2', complete: true, dropped: false },
    ]);
    expect(join.sourceStatuses().map((s) => s.name).sort()).toEqual(['region:r1', 'region:r2']);
  });

  it('lists a key held in two regions once, with the registration whose content changed last (its version)', async () => {
    const { join, r1, r2 } = startRegions();
    const first = await r1.heartbeat({ ...SHARED, model: 'older' });
    expect(first.changed).toBe(true);
    const key = poolKey(SHARED);
    await eventually(() => expect(join.knownVersion(key)).toBe(1));
    // A later content change in r2, written as r2's replicas write it: above the version they knew.
    await r2.heartbeat({ ...SHARED, model: 'newer' }, undefined, join.knownVersion(key));
    await eventually(() => expect(list(join).pools).toMatchObject([{ name: 'shared', model: 'newer', lease_regions: ['r1', 'r2'] }]));
    expect(join.knownVersion(key)).toBe(2);
    // A plain renewal in r1 (same content) changes nothing: the content change decides, not the renewal.
    await r1.heartbeat({ ...SHARED, model: 'older' }, undefined, join.knownVersion(key));
    await r1.sweep();
    expect(list(join).pools).toMatchObject([{ model: 'newer' }]);
    // A change in r1 after it is shown in turn.
    await r1.heartbeat({ ...SHARED, model: 'newest' }, undefined, join.knownVersion(key));
    await eventually(() => expect(list(join).pools).toMatchObject([{ model: 'newest' }]));
    expect(join.knownVersion(key)).toBe(3);
  });

  it('holds a followed region that cannot be read, then drops its pools with a delete each; other regions untouched', async () => {
    const { join, r1, r2, events } = startRegions();
    await r1.heartbeat(A);
    await r2.heartbeat(B);
    await r2.heartbeat(SHARED);
    await r1.heartbeat(SHARED);
    await eventually(() => expect(list(join).pools.map((p) => p.name)).toEqual(['pool-a', 'pool-b', 'shared']));
    await eventually(() => expect(list(join).complete).toBe(true));
    events.length = 0;

    const cutAt = Date.now();
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(region(join, 'r2')).toMatchObject({ complete: false, dropped: false }));
    expect(list(join).complete).toBe(false);
    expect(Date.parse(region(join, 'r2')!.unreachable_since!)).toBeGreaterThanOrEqual(cutAt - 5);
    expect(region(join, 'r2')!.reason).toMatch(/connection held/);
    // Held: nothing left the list yet, and the home region's entry is complete.
    expect(list(join).pools.map((p) => p.name)).toEqual(['pool-a', 'pool-b', 'shared']);
    expect(region(join, 'r1')).toEqual({ name: 'r1', complete: true, dropped: false });

    await eventually(() => expect(region(join, 'r2')?.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(HOLD_MS - 2);
    expect(list(join).pools.map((p) => p.name)).toEqual(['pool-a', 'shared']);
    expect(leaseRegionsOf(join)).toEqual({ 'pool-a': ['r1'], shared: ['r1'] });
    const deletes = events.filter((e) => e.kind === 'delete').map((e) => (e.kind === 'delete' ? e.data.pool.name : ''));
    expect(deletes).toEqual(['pool-b']);
    // The shared pool stays, now held by r1 only; pool-a never changed.
    expect(events.filter((e) => e.kind === 'upsert').map((e) => (e.kind === 'upsert' ? e.data.pool.name : ''))).toEqual(['shared']);
    // The drop reaches watchers in a resync carrying the region's entry.
    const resync = events.filter((e) => e.kind === 'resync').at(-1);
    expect(resync?.kind === 'resync' && resync.data.regions?.find((r) => r.name === 'r2')?.dropped).toBe(true);

    r2.setCut(false);
    await eventually(() => expect(region(join, 'r2')).toEqual({ name: 'r2', complete: true, dropped: false }), { timeoutMs: 3000 });
    expect(list(join).pools.map((p) => p.name)).toEqual(['pool-a', 'pool-b', 'shared']);
    expect(leaseRegionsOf(join)).toEqual({ 'pool-a': ['r1'], 'pool-b': ['r2'], shared: ['r1', 'r2'] });
    expect(list(join).complete).toBe(true);
  });

  it('drops a large region in batches: the event loop turns between them, and watchers see a delete per pool', async () => {
    const { join, r2, events } = startRegions({ applyBatchSize: 10 });
    const names = Array.from({ length: 100 }, (_, i) => `bulk-${i}`);
    for (const name of names) await r2.heartbeat(registration({ cluster_id: 'c2', namespace: 'llm', name }));
    await eventually(() => expect(list(join).pools).toHaveLength(100));
    await eventually(() => expect(list(join).complete).toBe(true));
    events.length = 0;
    // Where the drop stands when the event loop first turns after its first delete.
    let deletesAtNextTurn: number | undefined;
    join.view.subscribe((event) => {
      if (event.kind === 'delete' && deletesAtNextTurn === undefined) {
        deletesAtNextTurn = -1;
        setImmediate(() => (deletesAtNextTurn = events.filter((e) => e.kind === 'delete').length));
      }
    });

    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(region(join, 'r2')?.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    // The entry says dropped once every pool is gone, each in a delete of its own.
    expect(list(join).pools).toEqual([]);
    const deleted = events.filter((e) => e.kind === 'delete').map((e) => (e.kind === 'delete' ? e.data.pool.name : ''));
    expect(deleted.sort()).toEqual([...names].sort());
    // Not in one turn: the loop ran between the first batch and the rest.
    expect(deletesAtNextTurn).toBeGreaterThanOrEqual(10);
    expect(deletesAtNextTurn).toBeLessThan(100);
  });

  it.each([
    ['read from a snapshot (its log no longer reaches back)', true],
    ['its log resumed where it was left', false],
  ])('a region read again while its drop is under way, %s: the drop stops there and every pool it holds stays', async (_, positionLost) => {
    const { join, r2 } = startRegions({ applyBatchSize: 1 });
    // A store may give its records in any order (Redis's ZSCAN does): here the reverse of the order this
    // replica first saw them in, so the snapshot reaches pools the drop has not reached yet.
    const read = r2.snapshot.bind(r2);
    r2.snapshot = async () => {
      const snapshot = await read();
      return { ...snapshot, records: [...snapshot.records].reverse() };
    };
    const names = Array.from({ length: 3000 }, (_, i) => `bulk-${i}`);
    for (const name of names) await r2.heartbeat(registration({ cluster_id: 'c2', namespace: 'llm', name }));
    await eventually(() => expect(list(join).pools).toHaveLength(3000));
    await eventually(() => expect(list(join).complete).toBe(true));
    // The region answers again as soon as the drop has begun, so its snapshot comes while the drop,
    // one pool a turn, is still under way (how far it got by then does not matter: see below).
    let reopened = false;
    join.view.subscribe((event) => {
      if (event.kind === 'delete' && !reopened) {
        reopened = true;
        r2.setCut(false);
        if (positionLost) r2.failWatches.push(new PositionLostError('0'));
      }
    });
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(reopened).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    await eventually(() => expect(region(join, 'r2')).toEqual({ name: 'r2', complete: true, dropped: false }), { timeoutMs: 3000 });
    // Whatever the drop had reached came back (with the snapshot, or as the drop had kept it), and nothing
    // after it dropped a pool again.
    await eventually(() => expect(list(join).pools).toHaveLength(3000), { timeoutMs: 3000 });
    await throughout(200, 20, () => {
      expect(list(join).pools).toHaveLength(3000);
      expect(region(join, 'r2')?.dropped).toBe(false);
    });
  });

  it('a dropped region whose log is resumed: its pools back as they were with the changes since, nothing read whole, and a pool that died meanwhile never listed again', async () => {
    const leaseMs = 1000;
    const { join, r2, events } = startRegions({ leaseMs });
    const C = registration({ cluster_id: 'c2', namespace: 'llm', name: 'pool-c' });
    const DIES = registration({ cluster_id: 'c2', namespace: 'llm', name: 'dies' });
    for (const pool of [B, C, DIES]) await r2.heartbeat(pool);
    await eventually(() => expect(list(join).pools.map((p) => p.name)).toEqual(['dies', 'pool-b', 'pool-c']));
    await eventually(() => expect(list(join).complete).toBe(true));
    // r2's PoolRelays go on renewing (its Redis takes their heartbeats), all but one.
    const renewing = setInterval(() => void Promise.all([r2.heartbeat(B), r2.heartbeat(C)]), 100);
    try {
      r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
      await eventually(() => expect(region(join, 'r2')?.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
      expect(list(join).pools).toEqual([]);
      await r2.heartbeat({ ...C, model: 'changed while cut off' });
      clearInterval(renewing);
      const renewingChanged = setInterval(() => void Promise.all([r2.heartbeat(B), r2.heartbeat({ ...C, model: 'changed while cut off' })]), 100);
      try {
        // Past its deadline there (nobody sweeps r2): a lease that ran out while r2 could not be read.
        await eventually(async () => expect((await r2.inner.dueLapses(20)).map((d) => d.key)).toEqual([poolKey(DIES)]), { timeoutMs: leaseMs + 1000 });
        const reads = r2.snapshotCalls;
        events.length = 0;
        r2.setCut(false);
        await eventually(() => expect(region(join, 'r2')).toEqual({ name: 'r2', complete: true, dropped: false }), { timeoutMs: 3000 });
        await eventually(() => expect(list(join).pools.map((p) => [p.name, p.model])).toEqual([
          ['pool-b', B.model],
          ['pool-c', 'changed while cut off'],
        ]));
        expect(r2.snapshotCalls).toBe(reads);
        // The pool that died was never listed again, not even until the next due read.
        expect(events.filter((e) => e.kind === 'upsert').map((e) => e.kind === 'upsert' && e.data.pool.name).sort()).toEqual(['pool-b', 'pool-c', 'pool-c']);
        expect(join.directory.get(poolKey(DIES))?.getSnapshot().context.lease).toBe('lapsed');
      } finally {
        clearInterval(renewingChanged);
      }
    } finally {
      clearInterval(renewing);
    }
  });

  it('a dropped region whose log was trimmed past where it was left: read whole, as it is now', async () => {
    const { join, r2 } = startRegions({ changeLogCap: 5 });
    await r2.heartbeat(B);
    await eventually(() => expect(list(join).complete).toBe(true));
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(region(join, 'r2')?.dropped).toBe(true), { timeoutMs: HOLD_MS + 2000 });
    // More changes than the log keeps: where the follower left it is trimmed away.
    for (let i = 0; i < 20; i += 1) await r2.heartbeat(registration({ cluster_id: 'c2', namespace: 'llm', name: `new-${i}` }));
    const reads = r2.snapshotCalls;
    r2.setCut(false);
    await eventually(() => expect(region(join, 'r2')).toEqual({ name: 'r2', complete: true, dropped: false }), { timeoutMs: 3000 });
    expect(list(join).pools).toHaveLength(21);
    expect(r2.snapshotCalls).toBe(reads + 1);
  });

  it('keeps a region read again before the hold ends, with nothing deleted', async () => {
    const { join, r2, events } = startRegions();
    await r2.heartbeat(B);
    await eventually(() => expect(list(join).complete).toBe(true));
    r2.setCut(true, new StoreUnavailableError('redis store: connection held'));
    await eventually(() => expect(region(join, 'r2')?.complete).toBe(false));
    r2.setCut(false);
    await eventually(() => expect(region(join, 'r2')?.complete).toBe(true));
    expect(region(join, 'r2')?.dropped).toBe(false);
    expect(events.some((e) => e.kind === 'delete')).toBe(false);
    expect(list(join).pools.map((p) => p.name)).toEqual(['pool-b']);
  });

  it('lapses the pools of a followed region that nobody sweeps, from its due deadlines', async () => {
    const leaseMs = 200;
    const { join, r2 } = startRegions({ leaseMs });
    await r2.heartbeat(B);
    await eventually(() => expect(list(join).pools.map((p) => p.name)).toEqual(['pool-b']));
    const start = Date.now();
    // No replica of r2 sweeps (the join only reads r2); the lease still leaves within lease + 2 s.
    await eventually(() => expect(list(join).pools).toEqual([]), { timeoutMs: leaseMs + 2000 });
    expect(Date.now() - start).toBeGreaterThanOrEqual(leaseMs - 50);
    expect(join.directory.get('c2/llm/pool-b')?.getSnapshot().context.lease).toBe('lapsed');
  });

  it('does not lapse a lease that was renewed after its due deadline was read', async () => {
    const { join, r2 } = startRegions();
    await r2.heartbeat(B);
    await eventually(() => expect(list(join).pools).toHaveLength(1));
    const lease = join.directory.get('c2/llm/pool-b')!.getSnapshot().context.leases.r2!;
    // A due read that predates the lease this replica knows: stale, so ignored.
    (join as unknown as { leases: RegionLeases }).leases.due('r2', [{ key: 'c2/llm/pool-b', atMs: lease.deadlineMs - 1 }], lease.receipt - 1);
    expect(list(join).pools).toHaveLength(1);
  });

  it('never drops the home region: its pools are held while it cannot be read', async () => {
    const { join, r1 } = startRegions();
    await r1.heartbeat(A);
    await eventually(() => expect(list(join).complete).toBe(true));
    r1.setCut(true);
    await eventually(() => expect(region(join, 'r1')?.complete).toBe(false));
    expect(join.storeReadable.ok).toBe(false);
    expect(join.storeReadable.reason).toMatch(/^region r1: /);
    // Throughout twice the hold: still listed, never dropped.
    await throughout(HOLD_MS * 2, 25, () => {
      expect(region(join, 'r1')?.dropped).toBe(false);
      expect(list(join).pools.map((p) => p.name)).toEqual(['pool-a']);
    });
  });
});
