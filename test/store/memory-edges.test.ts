// The memory store at its edges, on a clock the test sets: the option and argument checks, a heartbeat
// exactly at a deadline, due lapses exactly at the cut-off and in deadline order, the router store's keys,
// and a closed store.
import { describe, expect, it } from 'vitest';
import { createMemoryRouterStore, createMemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError } from '../../src/store/types.js';
import { registration } from '../support/registration.js';

function onClock(leaseMs = 100) {
  const clock = { nowMs: 1_000 };
  const store = createMemoryStore({ leaseMs, now: () => clock.nowMs });
  return { clock, store };
}

describe('memory store edges', () => {
  it('refuses a lease that is not positive, naming it', () => {
    for (const leaseMs of [0, -1, Number.NaN]) {
      expect(() => createMemoryStore({ leaseMs })).toThrow(new RangeError(`leaseMs must be positive, got ${leaseMs}`));
    }
    expect(() => createMemoryStore({ leaseMs: 1 })).not.toThrow();
  });

  it('refuses a grace that is negative or not finite, naming it; a grace of 0 is the deadline itself', async () => {
    const { store } = onClock();
    for (const graceMs of [-1, Number.POSITIVE_INFINITY, Number.NaN]) {
      await expect(store.dueLapses(graceMs)).rejects.toThrow(new RangeError(`graceMs must be a finite number >= 0, got ${graceMs}`));
    }
    await expect(store.dueLapses(0)).resolves.toEqual([]);
  });

  it('a heartbeat exactly at the deadline comes after a lapse; one a ms before renews', async () => {
    const { clock, store } = onClock();
    const pool = registration({ name: 'edge' });
    const { key } = await store.heartbeat(pool);
    const { position } = await store.snapshot();
    clock.nowMs += 99;
    expect((await store.heartbeat(pool)).changed).toBe(false);
    clock.nowMs += 100;
    // Now exactly at the renewed deadline: due, so the log says it lapsed before it says it is back.
    expect((await store.heartbeat(pool)).changed).toBe(true);
    const events: { type: string; key?: string }[] = [];
    const stop = new AbortController();
    for await (const event of store.watch(position, stop.signal)) {
      events.push({ type: event.type, key: event.type === 'lapse' ? event.key : event.record.key });
      if (events.length === 2) stop.abort();
    }
    expect(events).toEqual([
      { type: 'lapse', key },
      { type: 'upsert', key },
    ]);
  });

  it('lists due lapses at the cut-off, not a ms before it, soonest first', async () => {
    const { clock, store } = onClock();
    const late = await store.heartbeat(registration({ name: 'late' }));
    clock.nowMs += 10;
    const later = await store.heartbeat(registration({ name: 'later' }));
    clock.nowMs -= 10;
    const early = await store.heartbeat(registration({ name: 'early' }));
    // Deadlines: late and early at 1,100 (both renewed at 1,000), later at 1,110.
    clock.nowMs = 1_109;
    expect((await store.dueLapses()).map((d) => d.key).sort()).toEqual([early.key, late.key].sort());
    clock.nowMs = 1_110;
    const due = await store.dueLapses();
    expect(due.map((d) => d.atMs)).toEqual([1_100, 1_100, 1_110]);
    expect(due[2]!.key).toBe(later.key);
    // With a grace, the cut-off moves back by it.
    expect((await store.dueLapses(10)).map((d) => d.atMs)).toEqual([1_100, 1_100]);
    expect(await store.dueLapses(11)).toEqual([]);
  });

  it('lists due lapses in deadline order whatever order they were renewed in', async () => {
    const { clock, store } = onClock();
    for (const [name, at] of [['c', 1_030], ['a', 1_010], ['b', 1_020]] as const) {
      clock.nowMs = at;
      await store.heartbeat(registration({ name }));
    }
    clock.nowMs = 2_000;
    expect((await store.dueLapses()).map((d) => d.atMs)).toEqual([1_110, 1_120, 1_130]);
  });

  it("keys a router lease by the router's id", async () => {
    const store = createMemoryRouterStore({ leaseMs: 1_000 });
    const { key } = await store.heartbeat({ id: 'router-7', url: 'http://127.0.0.1:9107' });
    expect(key).toBe('router-7');
    expect((await store.snapshot()).records.map((r) => r.key)).toEqual(['router-7']);
  });

  it('a closed store refuses every call as unavailable', async () => {
    const { store } = onClock();
    await store.close();
    const closed = new StoreUnavailableError('the memory store is closed');
    await expect(store.heartbeat(registration({ name: 'x' }))).rejects.toThrow(closed);
    await expect(store.snapshot()).rejects.toThrow(closed);
    await expect(store.dueLapses()).rejects.toThrow(closed);
    await expect(store.sweep()).rejects.toThrow(closed);
    await expect(store.heartbeat(registration({ name: 'x' }))).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
