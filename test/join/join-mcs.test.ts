// The join in `mcs` mode: a pool is listed only when both sides agree (a live lease in the memory store
// and a Ready PoolRelay from the slice source, driven here by hand); MCS gives the addresses, the lease
// the rest. A relist drops pools through one resync, never a delete (docs/contract.md §2, §3, §5).
import { afterEach, describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/contract/index.js';
import { Join } from '../../src/join/join.js';
import type { PoolEndpoints } from '../../src/kube/types.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually } from '../support/wait.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { HandDrivenSliceSource } from './support.js';

// Long enough that no lease lapses during a test; no warmup (the delegating store says it keeps leases).
const LEASE_MS = 60_000;
const running: Join[] = [];
afterEach(async () => {
  for (const join of running.splice(0)) await join.stop();
});

const key = (name: string) => `c1/llm/${name}`;
const reg = (name: string) => registration({ cluster_id: 'c1', namespace: 'llm', name, model: `model-${name}` });
const endpoints = (n: number, frontends = true): PoolEndpoints => ({
  relays: [`http://10.1.0.${n}:9000`],
  frontends: frontends ? [`http://10.2.0.${n}:8000`] : [],
  frontendSlicesWithPort: frontends,
});

async function startJoin(leaseMs = LEASE_MS) {
  const store = new DelegatingStore(createMemoryStore({ leaseMs }), { forgetsOnRestart: false });
  const slices = new HandDrivenSliceSource();
  const join = new Join({ poolDiscovery: 'mcs', leaseMs, store, slices, logger: silentLogger(), sweepIntervalMs: 20 });
  running.push(join);
  const events: WatchEvent[] = [];
  join.view.subscribe((event) => events.push(structuredClone(event)));
  join.start();
  const stateOf = (name: string) => join.directory.get(key(name))?.getSnapshot().value;
  const names = () => join.view.list().pools.map((p) => p.name);
  return { join, store, slices, events, stateOf, names };
}

describe('Join (mcs, hand-driven slices)', () => {
  it('is ready and complete only once both the store and Kubernetes were read', async () => {
    const { join, slices } = await startJoin();
    await eventually(() => expect(join.sourceStatuses().find((s) => s.name === 'store')?.synced).toBe(true));
    expect(join.ready).toBe(false);
    expect(join.view.complete).toBe(false);
    expect(join.view.reasons.join('\n')).toMatch(/^kubernetes: /);

    slices.resync({});
    slices.status(true);
    expect(join.ready).toBe(true);
    expect(join.view.complete).toBe(true);
  });

  it('lists only pools both sides list, addresses from MCS and the rest from the lease', async () => {
    const { join, store, slices, stateOf, names } = await startJoin();
    await store.heartbeat(reg('both'));
    await store.heartbeat(reg('lease-only'));
    slices.resync({ [key('both')]: endpoints(1), [key('mcs-only')]: endpoints(2) });
    slices.status(true);

    await eventually(() => expect(names()).toEqual(['both']));
    await eventually(() => expect(stateOf('lease-only')).toBe('one-sided'));
    expect(stateOf('mcs-only')).toBe('unregistered');
    expect(join.view.list()).toMatchObject({ complete: true });
    expect(join.view.list().pools[0]).toEqual({
      cluster_id: 'c1',
      namespace: 'llm',
      name: 'both',
      model: 'model-both',
      capabilities: reg('both').capabilities,
      capacity: reg('both').capacity,
      location: reg('both').location,
      // From MCS, not from the registration's own `relay` and `frontends`.
      relays: ['http://10.1.0.1:9000'],
      frontends: ['http://10.2.0.1:8000'],
      state: 'live',
    });
  });

  it('lists a pool without a Ready frontend as frontendless', async () => {
    const { store, slices, names, join } = await startJoin();
    await store.heartbeat(reg('a'));
    slices.resync({ [key('a')]: endpoints(1, false) });
    await eventually(() => expect(names()).toEqual(['a']));
    expect(join.view.list().pools[0]).toMatchObject({ state: 'frontendless', frontends: [], relays: ['http://10.1.0.1:9000'] });
  });

  it('a slice update joins a pool with an upsert, and its removal makes it one-sided with a delete', async () => {
    const { store, slices, events, stateOf, names } = await startJoin();
    await store.heartbeat(reg('a'));
    slices.resync({});
    await eventually(() => expect(stateOf('a')).toBe('one-sided'));
    events.length = 0;

    slices.update(key('a'), endpoints(1));
    expect(names()).toEqual(['a']);
    expect(events.map((e) => e.kind)).toEqual(['upsert']);

    slices.update(key('a'), null);
    expect(names()).toEqual([]);
    expect(stateOf('a')).toBe('one-sided');
    expect(events.map((e) => e.kind)).toEqual(['upsert', 'delete']);
  });

  it('a relist without a joined pool removes it through one resync and no delete', async () => {
    const { store, slices, events, stateOf, names } = await startJoin();
    await store.heartbeat(reg('a'));
    await store.heartbeat(reg('b'));
    slices.resync({ [key('a')]: endpoints(1), [key('b')]: endpoints(2), [key('mcs-only')]: endpoints(3) });
    await eventually(() => expect(names()).toEqual(['a', 'b']));
    events.length = 0;

    slices.resync({ [key('b')]: endpoints(2) });

    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'resync', data: { pools: [{ name: 'b' }] } });
    expect(names()).toEqual(['b']);
    expect(stateOf('a')).toBe('one-sided');
    // Neither side lists it any more.
    expect(stateOf('mcs-only')).toBe('absent');
  });

  it('a pool neither side lists becomes absent', async () => {
    const { slices, stateOf } = await startJoin();
    slices.resync({ [key('x')]: endpoints(1) });
    expect(stateOf('x')).toBe('unregistered');
    slices.update(key('x'), null);
    expect(stateOf('x')).toBe('absent');
  });

  it('a lapse makes a joined pool lapsed (MCS still shows it) and a one-sided pool absent', async () => {
    const shortLeaseMs = 300;
    const { store, slices, stateOf, names, events } = await startJoin(shortLeaseMs);
    await store.heartbeat(reg('joined'));
    await store.heartbeat(reg('one-sided'));
    slices.resync({ [key('joined')]: endpoints(1) });
    await eventually(() => expect(names()).toEqual(['joined']));
    expect(stateOf('one-sided')).toBe('one-sided');

    await eventually(() => expect(names()).toEqual([]), { timeoutMs: shortLeaseMs + 1000 });
    await eventually(() => expect(stateOf('one-sided')).toBe('absent'), { timeoutMs: shortLeaseMs + 1000 });
    expect(stateOf('joined')).toBe('lapsed');
    expect(events.filter((e) => e.kind === 'delete').map((e) => e.data.pool.name)).toEqual(['joined']);
  });

  it('status(false) makes the view incomplete and keeps the last pools', async () => {
    const { join, store, slices, events, names } = await startJoin();
    await store.heartbeat(reg('a'));
    slices.resync({ [key('a')]: endpoints(1) });
    slices.status(true);
    await eventually(() => expect(names()).toEqual(['a']));
    await eventually(() => expect(join.view.complete).toBe(true));
    events.length = 0;

    slices.status(false, 'watch dropped; relisting');
    expect(join.view.complete).toBe(false);
    expect(join.view.reasons).toEqual(['kubernetes: watch dropped; relisting']);
    expect(names()).toEqual(['a']);
    expect(events).toEqual([{ kind: 'resync', data: expect.objectContaining({ complete: false, pools: [expect.objectContaining({ name: 'a' })] }) }]);
    expect(join.ready).toBe(true); // it was read in full once

    slices.status(true);
    expect(join.view.complete).toBe(true);
  });

  it('stops the slice source on stop()', async () => {
    const { join, slices } = await startJoin();
    await join.stop();
    running.splice(running.indexOf(join), 1);
    expect(slices.stopped).toBe(true);
  });
});
