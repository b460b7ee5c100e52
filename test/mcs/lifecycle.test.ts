// A pool's whole life in /debug/pools, in one test: unregistered → live → frontendless → live →
// lapsed → live → gone. "Gone" is the chart's `absent`: neither side lists the pool any more. It cannot
// leave both sides in one event, so it passes through `one-sided` (MCS dropped it first) on the way.
import { afterEach, describe, expect, it } from 'vitest';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';
import { listedNames, startMcsService, stopMcsServices } from './support/mcs-service.js';
import { poolKeyOf, slice } from './support/slices.js';

const redis = useRedis('mcs');
afterEach(stopMcsServices);

describe('a pool through its life', () => {
  it('unregistered → live → frontendless → live → lapsed → live → gone, in /debug/pools', async () => {
    const service = await startMcsService({ redis, leaseMs: 500 });
    const pool = { cluster: 'gpu-east-1', namespace: 'llm', pool: 'lifelong' };
    const key = poolKeyOf(pool);
    const relay = slice({ flavour: 'mcs', ...pool, role: 'relay', endpoints: [{ ip: '10.1.0.1' }] });
    const frontend = slice({ flavour: 'mcs', ...pool, role: 'frontend', endpoints: [{ ip: '10.2.0.1' }] });
    const reach = (state: string) => waitFor(() => service.stateOf(key) === state, { message: state, timeoutMs: 5000 });

    // MCS shows the pool before any PoolRelay registers.
    service.fake.add(relay);
    service.fake.add(frontend);
    await reach('unregistered');
    // Its PoolRelay heartbeats.
    let stopBeating = service.keepBeating([pool]);
    await reach('live');
    // The frontend slice goes, and comes back.
    service.fake.remove(frontend.metadata.namespace, frontend.metadata.name);
    await reach('frontendless');
    service.fake.add(frontend);
    await reach('live');
    // The PoolRelay stops: the lease lapses while MCS still shows the relay Ready.
    stopBeating();
    await reach('lapsed');
    expect(await listedNames(service)).toEqual([]);
    // It heartbeats again.
    stopBeating = service.keepBeating([pool]);
    await reach('live');
    // The pool is deleted: its slices go, then its lease runs out.
    service.fake.remove(relay.metadata.namespace, relay.metadata.name);
    service.fake.remove(frontend.metadata.namespace, frontend.metadata.name);
    await reach('one-sided');
    stopBeating();
    await reach('absent');

    const debug = await service.debugPool(key);
    expect(debug).toMatchObject({ pool: key, state: 'absent', relays: [], frontends: [], lease: 'none' });
    expect(debug.history.map((h) => `${h.from}→${h.to} (${h.event})`)).toEqual([
      'absent→unregistered (SLICES)',
      'unregistered→live (LEASE_UPSERT)',
      'live→frontendless (SLICES)',
      'frontendless→live (SLICES)',
      'live→lapsed (LEASE_LAPSED)',
      'lapsed→live (LEASE_UPSERT)',
      'live→one-sided (SLICES)',
      'one-sided→absent (LEASE_LAPSED)',
    ]);
    // Each transition is timestamped, in order; the pool that left is still shown (for ten minutes).
    const times = debug.history.map((h) => Date.parse(h.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect((await service.debug()).pools.map((p) => p.pool)).toContain(key);
    expect(await listedNames(service)).toEqual([]);
  });
});
