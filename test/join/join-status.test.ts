// What the join tells /healthz and /metrics apart from the view: its regions sorted by name whatever the
// home region is called, the store counters of every region summed, and the EndpointSlice loop's restarts.
import { afterEach, describe, expect, it } from 'vitest';
import { Join } from '../../src/join/join.js';
import { createMemoryStore } from '../../src/store/memory.js';
import type { StoreStats } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { silentLogger } from '../support/logs.js';
import { HandDrivenSliceSource, sliceLoopDown } from './support.js';

const joins: Join[] = [];
afterEach(async () => {
  for (const join of joins.splice(0)) await join.stop();
});

function withStats(stats: StoreStats): DelegatingStore {
  return Object.assign(new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false }), { stats: () => stats });
}

describe('Join: status', () => {
  it('lists its regions sorted by name, the home region among them, and sums every store’s counters', () => {
    const home = withStats({ reconnects: 2, unreadableEntries: 1 });
    const join = new Join({
      poolDiscovery: 'registrations',
      leaseMs: 60_000,
      store: home,
      regions: {
        home: 'm-home',
        followed: [
          { name: 'z-far', store: withStats({ reconnects: 5, unreadableEntries: 0 }) },
          { name: 'a-near', store: withStats({ reconnects: 0, unreadableEntries: 4 }) },
        ],
        holdMs: 1000,
      },
      logger: silentLogger(),
    });
    joins.push(join);
    expect(join.hasRegions).toBe(true);
    expect(join.regionStatuses().map((r) => [r.name, r.home])).toEqual([
      ['a-near', false],
      ['m-home', true],
      ['z-far', false],
    ]);
    expect(join.storeStats()).toEqual({ reconnects: 7, unreadableEntries: 5 });
  });

  it('without regions: one region named "", and a store without counters counts nothing', () => {
    const join = new Join({
      poolDiscovery: 'registrations',
      leaseMs: 60_000,
      store: new DelegatingStore(createMemoryStore({ leaseMs: 60_000 })),
      logger: silentLogger(),
    });
    joins.push(join);
    expect(join.hasRegions).toBe(false);
    expect(join.regionStatuses().map((r) => r.name)).toEqual(['']);
    expect(join.storeStats()).toEqual({ reconnects: 0, unreadableEntries: 0 });
  });

  it('reports the EndpointSlice loop down with its reason, counts each restart, and clears it when synced again', () => {
    const slices = new HandDrivenSliceSource();
    let restarts = 0;
    const join = new Join({
      poolDiscovery: 'mcs',
      leaseMs: 60_000,
      store: new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false }),
      slices,
      logger: silentLogger(),
      onSliceLoopRestart: () => (restarts += 1),
    });
    joins.push(join);
    join.start();
    expect(join.sourceDown).toBeUndefined();
    sliceLoopDown(slices, 'watch failed: socket hang up');
    expect(join.sourceDown).toBe('kubernetes: watch failed: socket hang up');
    expect(restarts).toBe(1);
    sliceLoopDown(slices, undefined);
    expect(join.sourceDown).toBeUndefined();
    expect(restarts).toBe(1);
  });
});
