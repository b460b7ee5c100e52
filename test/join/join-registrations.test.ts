// The join in `registrations` mode over the real memory store: heartbeats reach the listed view only
// through the store's change log, lapses (swept on the store's clock) remove pools, and the view is
// incomplete for one lease after start because the memory store forgets leases on restart.
import { afterEach, describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/contract/index.js';
import { Join } from '../../src/join/join.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError, StoreUnavailableError, type RegistrationStore } from '../../src/store/types.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually, throughout } from '../support/wait.js';
import { DelegatingStore } from '../support/delegating-store.js';

const LEASE_MS = 300;
const running: Array<{ join: Join; store: RegistrationStore }> = [];
afterEach(async () => {
  for (const { join, store } of running.splice(0)) {
    await join.stop();
    await store.close();
  }
});

function startJoin() {
  const store = createMemoryStore({ leaseMs: LEASE_MS });
  const join = new Join({ poolDiscovery: 'registrations', leaseMs: LEASE_MS, store, logger: silentLogger(), sweepIntervalMs: 20 });
  running.push({ join, store });
  const events: WatchEvent[] = [];
  join.view.subscribe((event) => events.push(structuredClone(event)));
  const startedAt = performance.now();
  join.start();
  return { join, store, events, startedAt };
}

const POOL = registration({ cluster_id: 'c1', namespace: 'llm', name: 'pool-a' });
const names = (join: Join) => join.view.list().pools.map((p) => p.name);

describe('Join (registrations, memory store)', () => {
  it('is ready after the first snapshot, and complete one lease after start (warmup)', async () => {
    const store = createMemoryStore({ leaseMs: LEASE_MS });
    const join = new Join({ poolDiscovery: 'registrations', leaseMs: LEASE_MS, store, logger: silentLogger(), sweepIntervalMs: 20 });
    running.push({ join, store });
    expect(join.ready).toBe(false);
    expect(join.view.complete).toBe(false);

    const startedAt = performance.now();
    join.start();
    await eventually(() => expect(join.ready).toBe(true));
    expect(join.sourceStatuses().find((s) => s.name === 'store')).toMatchObject({ synced: true });
    // Ready, yet still incomplete: leases renewed before this replica started may be missing.
    if (performance.now() - startedAt < LEASE_MS - 50) {
      expect(join.view.complete).toBe(false);
      expect(join.view.reasons.join('\n')).toMatch(/memory store/);
    }

    await eventually(() => expect(join.view.complete).toBe(true), { timeoutMs: LEASE_MS + 1000 });
    // setTimeout may fire a millisecond early by rounding; never a lease early.
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(LEASE_MS - 2);
    expect(join.view.reasons).toEqual([]);
    expect(join.sourceStatuses().every((s) => s.synced)).toBe(true);
    expect(join.storeReadable).toEqual({ ok: true });
  });

  it('publishes a resync when completeness changes at the end of the warmup', async () => {
    const { join, events } = startJoin();
    await eventually(() => expect(join.view.complete).toBe(true), { timeoutMs: LEASE_MS + 1000 });
    const last = events.at(-1);
    expect(last).toMatchObject({ kind: 'resync', data: { complete: true } });
  });

  it('lists a pool once its heartbeat reaches the store, with the fields of its registration', async () => {
    const { join, store, events } = startJoin();
    await eventually(() => expect(join.ready).toBe(true));
    await store.heartbeat(POOL);
    await eventually(() => expect(names(join)).toEqual(['pool-a']));

    expect(join.view.list().pools[0]).toEqual({
      cluster_id: 'c1',
      namespace: 'llm',
      name: 'pool-a',
      model: POOL.model,
      capabilities: POOL.capabilities,
      capacity: POOL.capacity,
      location: POOL.location,
      relays: [POOL.relay],
      frontends: POOL.frontends,
      state: 'live',
    });
    const upserts = events.filter((e) => e.kind === 'upsert');
    expect(upserts).toHaveLength(1);
    expect(join.directory.get('c1/llm/pool-a')?.getSnapshot().value).toBe('live');
  });

  it('a pool registered before start arrives with the first snapshot', async () => {
    const store = createMemoryStore({ leaseMs: 5000 });
    await store.heartbeat(POOL);
    const join = new Join({ poolDiscovery: 'registrations', leaseMs: 5000, store, logger: silentLogger(), sweepIntervalMs: 20 });
    running.push({ join, store });
    join.start();
    await eventually(() => expect(join.ready).toBe(true));
    expect(names(join)).toEqual(['pool-a']);
  });

  it('removes a pool within lease + 1 s of its last heartbeat, with a delete', async () => {
    const { join, store, events } = startJoin();
    await store.heartbeat(POOL);
    await eventually(() => expect(names(join)).toEqual(['pool-a']));
    const lastHeartbeat = performance.now();

    await eventually(() => expect(names(join)).toEqual([]), { timeoutMs: LEASE_MS + 1000 });
    expect(performance.now() - lastHeartbeat).toBeLessThan(LEASE_MS + 1000);
    expect(events.filter((e) => e.kind === 'delete')).toEqual([
      { kind: 'delete', data: { revision: expect.any(String), pool: { cluster_id: 'c1', namespace: 'llm', name: 'pool-a' } } },
    ]);
    // It left the list but stays for /debug.
    expect(join.directory.get('c1/llm/pool-a')?.getSnapshot().value).toBe('lapsed');
  });

  it('keeps a pool listed while its heartbeats renew the lease', async () => {
    const { join, store } = startJoin();
    await store.heartbeat(POOL);
    await eventually(() => expect(names(join)).toEqual(['pool-a']));
    // At a relay's heartbeat interval, for three leases.
    await throughout(3 * LEASE_MS, LEASE_MS / 4, async () => {
      await store.heartbeat(POOL);
      expect(names(join)).toEqual(['pool-a']);
    });
  });

  it('a changed registration is published as an upsert, a frontendless one too', async () => {
    const { join, store, events } = startJoin();
    await store.heartbeat(POOL);
    await eventually(() => expect(names(join)).toEqual(['pool-a']));
    await store.heartbeat({ ...POOL, frontends: [] });
    await eventually(() => expect(join.view.list().pools[0]).toMatchObject({ state: 'frontendless', frontends: [] }));
    expect(events.filter((e) => e.kind === 'upsert')).toHaveLength(2);
  });
});

describe('Join (registrations): the store cannot be read', () => {
  function startOutageJoin(leaseMs: number) {
    const store = new DelegatingStore(createMemoryStore({ leaseMs }), { forgetsOnRestart: false });
    const join = new Join({
      poolDiscovery: 'registrations',
      leaseMs,
      store,
      logger: silentLogger(),
      sweepIntervalMs: 20,
      storeBackoff: { initialMs: 20, maxMs: 40 },
    });
    running.push({ join, store });
    const events: WatchEvent[] = [];
    join.view.subscribe((event) => events.push(structuredClone(event)));
    join.start();
    return { join, store, events };
  }
  const failing = (n: number) => Array.from({ length: n }, () => new StoreUnavailableError('command timed out'));

  it('serves the last view, incomplete and unhealthy, until the store answers again', async () => {
    const { join, store, events } = startOutageJoin(60_000);
    await store.heartbeat(POOL);
    await eventually(() => expect(names(join)).toEqual(['pool-a']));
    await eventually(() => expect(join.view.complete).toBe(true));
    events.length = 0;

    store.setCut(true, new StoreUnavailableError('connection reset'));
    await eventually(() => expect(join.view.complete).toBe(false));
    expect(join.storeReadable.ok).toBe(false);
    expect(join.storeReadable.reason).toMatch(/^store cannot be read: /);
    expect(join.view.reasons.join('\n')).toMatch(/store cannot be read/);
    expect(join.ready).toBe(true);
    expect(names(join)).toEqual(['pool-a']);
    expect(events).toEqual([{ kind: 'resync', data: expect.objectContaining({ complete: false }) }]);

    store.setCut(false);
    await eventually(() => expect(join.view.complete).toBe(true));
    expect(join.storeReadable).toEqual({ ok: true });
    expect(names(join)).toEqual(['pool-a']);
  });

  it('is unhealthy when the store cannot be read from the start, and not ready', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    store.failSnapshots = failing(1000);
    const join = new Join({
      poolDiscovery: 'registrations',
      leaseMs: 60_000,
      store,
      logger: silentLogger(),
      storeBackoff: { initialMs: 20, maxMs: 40 },
    });
    running.push({ join, store });
    // Not read yet cannot be told from never readable (docs/contract.md §5): not readable until a read succeeds.
    expect(join.storeReadable).toEqual({ ok: false, reason: 'store: not read yet' });
    join.start();
    await eventually(() => expect(store.snapshotCalls).toBeGreaterThan(1));
    expect(join.storeReadable).toEqual({ ok: false, reason: 'store cannot be read: command timed out' });
    expect(join.ready).toBe(false);
    expect(join.view.complete).toBe(false);

    store.failSnapshots = [];
    await eventually(() => expect(join.storeReadable).toEqual({ ok: true }));
    expect(join.ready).toBe(true);
  });

  /** The pool's lease runs out while the store cannot be read; resolves once the store no longer holds it. */
  async function lapsedInOutage(leaseMs: number) {
    const { join, store, events } = startOutageJoin(leaseMs);
    await store.heartbeat(POOL);
    await eventually(() => expect(names(join)).toEqual(['pool-a']));
    await eventually(() => expect(join.view.complete).toBe(true));

    store.setCut(true, new StoreUnavailableError('connection reset'));
    await eventually(() => expect(join.view.complete).toBe(false));
    // Self-preservation: nothing lapses on this replica's clock while the store cannot be read.
    const inner = store.inner;
    await eventually(async () => expect((await inner.snapshot()).records).toEqual([]), { timeoutMs: leaseMs + 1000 });
    expect(names(join)).toEqual(['pool-a']);
    events.length = 0;
    return { join, store, events };
  }

  it('a pool that lapsed during the outage: the log resumed where it was left brings its lapse, a delete', async () => {
    const { join, store, events } = await lapsedInOutage(300);
    const reads = store.snapshotCalls;
    store.setCut(false);
    await eventually(() => expect(names(join)).toEqual([]));
    expect(events.filter((e) => e.kind === 'delete').map((e) => e.kind === 'delete' && e.data.pool.name)).toEqual(['pool-a']);
    expect(store.snapshotCalls).toBe(reads);
    expect(join.directory.get('c1/llm/pool-a')?.getSnapshot().value).toBe('lapsed');
  });

  it('a pool that lapsed during the outage, when the log no longer reaches back: it leaves through the resync of the re-read, without a delete', async () => {
    const { join, store, events } = await lapsedInOutage(300);
    const reads = store.snapshotCalls;
    store.setCut(false);
    store.failWatches.push(new PositionLostError('0'));
    await eventually(() => expect(names(join)).toEqual([]));
    expect(store.snapshotCalls).toBe(reads + 1);
    expect(events.map((e) => e.kind)).not.toContain('delete');
    expect(events.find((e) => e.kind === 'resync')).toMatchObject({ data: { pools: [] } });
    expect(join.directory.get('c1/llm/pool-a')?.getSnapshot().value).toBe('lapsed');
  });
});
