// A store snapshot applied in batches (docs/design.md "The actors"): the event loop turns between two
// batches, the view publishes one resync for the whole snapshot, and the store counts as read (complete)
// only once every pool of it is applied.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { poolKey, type WatchEvent } from '../../src/contract/index.js';
import { eachBatch, inBatches } from '../../src/join/batches.js';
import { Join } from '../../src/join/join.js';
import { StoreFeed } from '../../src/join/store-feed.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError, type StoreSnapshot } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually } from '../support/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('inBatches', () => {
  it('runs the first batch at once and each later one after a turn of the event loop', async () => {
    const seen: number[] = [];
    const done = inBatches([1, 2, 3, 4, 5], 2, (n) => seen.push(n));
    expect(seen).toEqual([1, 2]);
    await nextTurn();
    expect(seen).toEqual([1, 2, 3, 4]);
    await done;
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  it('does not yield when everything fits in one batch', async () => {
    const seen: number[] = [];
    const done = inBatches(new Set([1, 2, 3]), 3, (n) => seen.push(n));
    expect(seen).toEqual([1, 2, 3]);
    await done;
    await inBatches([], 3, (n) => seen.push(n));
    expect(seen).toEqual([1, 2, 3]);
  });
});

describe('eachBatch', () => {
  it('hands over runs of `size`, the first at once, each later one after a turn of the event loop', async () => {
    const runs: number[][] = [];
    let turned = false;
    const items = [1, 2, 3, 4, 5];
    const done = eachBatch(items, 2, (batch) => runs.push([...batch]));
    expect(runs).toEqual([[1, 2]]);
    // One turn later: one more run, not all of them.
    setImmediate(() => (turned = runs.length === 2));
    // Added meanwhile: not handed over.
    items.push(6);
    await done;
    expect(turned).toBe(true);
    expect(runs).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('calls nothing for no items, and hands one run over at once when all fit', async () => {
    const runs: number[][] = [];
    await eachBatch([], 2, (batch) => runs.push([...batch]));
    expect(runs).toEqual([]);
    const done = eachBatch([1, 2], 2, (batch) => runs.push([...batch]));
    expect(runs).toEqual([[1, 2]]);
    await done;
    expect(runs).toEqual([[1, 2]]);
  });
});

describe('Join: a store snapshot in batches', () => {
  it('answers between batches, publishes one resync, and is complete only with every pool applied', async () => {
    const POOLS = 25;
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    for (let i = 0; i < POOLS; i += 1) await store.heartbeat(registration({ name: `pool-${i}` }));
    const join = new Join({ poolDiscovery: 'registrations', leaseMs: 60_000, store, logger: silentLogger(), applyBatchSize: 10 });
    cleanups.push(async () => {
      await join.stop();
      await store.close();
    });
    const events: WatchEvent[] = [];
    join.view.subscribe((event) => events.push(event));
    // A turn of the event loop between two batches: this ticker sees every size the view passes through.
    const seen: Array<{ size: number; complete: boolean }> = [];
    let ticking = true;
    const tick = () => {
      seen.push({ size: join.view.size, complete: join.view.complete });
      if (ticking) setImmediate(tick);
    };
    cleanups.push(async () => {
      ticking = false;
    });
    tick();
    join.start();
    await eventually(() => expect(join.view.complete).toBe(true));
    ticking = false;

    expect(join.view.size).toBe(POOLS);
    const sizesWhileIncomplete = new Set(seen.filter((s) => !s.complete).map((s) => s.size));
    expect([...sizesWhileIncomplete].sort((a, b) => a - b)).toEqual([0, 10, 20]);
    expect(seen.filter((s) => s.complete).every((s) => s.size === POOLS)).toBe(true);
    // One resync for the whole snapshot (with every pool), none pool by pool; then one when complete.
    expect(events.map((e) => e.kind)).toEqual(['resync', 'resync']);
    expect(events[0]!.kind === 'resync' && events[0]!.data.pools).toHaveLength(POOLS);
  });

  it('applies 2,000 pools per turn by default', async () => {
    const POOLS = 4_500;
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    for (let i = 0; i < POOLS; i += 1) await store.heartbeat(registration({ name: `pool-${i}` }));
    const join = new Join({ poolDiscovery: 'registrations', leaseMs: 60_000, store, logger: silentLogger() });
    cleanups.push(async () => {
      await join.stop();
      await store.close();
    });
    const sizes = new Set<number>();
    let ticking = true;
    const tick = () => {
      if (!join.view.complete) sizes.add(join.view.size);
      if (ticking) setImmediate(tick);
    };
    cleanups.push(async () => {
      ticking = false;
    });
    tick();
    join.start();
    await eventually(() => expect(join.view.complete).toBe(true), { timeoutMs: 10_000 });
    ticking = false;
    expect([...sizes].sort((a, b) => a - b)).toEqual([0, 2_000, 4_000]);
  });

  it('lapses the pools a re-read no longer holds, in batches too', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    for (let i = 0; i < 5; i += 1) await store.heartbeat(registration({ name: `pool-${i}` }));
    const join = new Join({ poolDiscovery: 'registrations', leaseMs: 60_000, store, logger: silentLogger(), applyBatchSize: 2 });
    cleanups.push(async () => {
      await join.stop();
      await store.close();
    });
    join.start();
    await eventually(() => expect(join.view.size).toBe(5));
    // The store loses two leases without logging their lapse; the next snapshot finds them missing.
    const snapshot = store.snapshot.bind(store);
    store.snapshot = async (): Promise<StoreSnapshot> => {
      const full = await snapshot();
      return { ...full, records: full.records.filter((r) => !['pool-1', 'pool-3'].includes(r.registration.name)) };
    };
    // A log that no longer reaches back: the feed reads a snapshot again at once.
    store.breakWatches(new PositionLostError('0-0'));
    await eventually(() => expect(join.view.list().pools.map((p) => p.name).sort()).toEqual(['pool-0', 'pool-2', 'pool-4']));
    expect(join.directory.get(poolKey(registration({ name: 'pool-1' })))?.getSnapshot().value).toBe('lapsed');
    expect(join.directory.size).toBe(5);
  });
});

describe('StoreFeed: a snapshot applied over several turns', () => {
  it('reports the store readable only once the sink has applied the snapshot', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }));
    let release!: () => void;
    const applied = new Promise<void>((resolve) => (release = resolve));
    const statuses: boolean[] = [];
    const snapshots: StoreSnapshot[] = [];
    const feed = new StoreFeed({
      store,
      logger: silentLogger(),
      sink: {
        snapshot: (snapshot) => {
          snapshots.push(snapshot);
          return applied;
        },
        event: () => {},
        status: (readable) => statuses.push(readable),
      },
    });
    cleanups.push(async () => {
      await feed.stop();
      await store.close();
    });
    feed.start();
    await eventually(() => expect(snapshots).toHaveLength(1));
    await nextTurn();
    expect(statuses).toEqual([]);
    release();
    await eventually(() => expect(statuses).toEqual([true]));
  });

  it('reports nothing when stopped while the snapshot is applied', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }));
    let release!: () => void;
    const statuses: boolean[] = [];
    let reads = 0;
    const feed = new StoreFeed({
      store,
      logger: silentLogger(),
      sink: {
        snapshot: () => {
          reads += 1;
          return new Promise<void>((resolve) => (release = resolve));
        },
        event: () => {},
        status: (readable) => statuses.push(readable),
      },
    });
    cleanups.push(() => store.close());
    feed.start();
    await eventually(() => expect(reads).toBe(1));
    const stopped = feed.stop();
    release();
    await stopped;
    expect(statuses).toEqual([]);
  });
});
