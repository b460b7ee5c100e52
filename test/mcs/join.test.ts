// The MCS join end to end in one process, for each naming flavour (docs/contract.md §2, §3, §5): EndpointSlices
// from a fake Kubernetes API through the real client, leases through POST /pools into a real Redis, read
// back through GET /pools, the SSE stream and /debug/pools.
import { afterEach, describe, expect, it } from 'vitest';
import { useRedis } from '../support/use-redis.js';
import { eventually, waitFor } from '../support/wait.js';
import { debugStates, listedNames, registrationFor, startMcsService, stopMcsServices, type PoolRef } from './support/mcs-service.js';
import { FLAVOURS, frontendUrl, joinedPoolSlices, poolKeyOf, relayUrl, slice } from './support/slices.js';

const redis = useRedis('mcs');
afterEach(stopMcsServices);

describe.each(FLAVOURS)('the MCS join (%s slices)', (flavour) => {
  // Cluster names with dashes: the Karmada rules must not split them.
  const ref = (pool: string, cluster = 'gpu-east-1'): PoolRef => ({ cluster, namespace: 'llm', pool });

  it('lists only pools both sides list, each field from its side; frontend-only pools stay hidden', async () => {
    const both = ref('both');
    const mcsOnly = ref('mcs-only');
    const leaseOnly = ref('lease-only');
    const frontendOnly = ref('frontend-only');
    const frontendOnlyUnregistered = ref('frontend-only-unregistered');
    // The same pool name from another cluster is another pool.
    const otherCluster = ref('both', 'gpu-west-2');
    const service = await startMcsService({ redis, flavour });
    for (const object of [
      ...joinedPoolSlices({ flavour, ...both, n: 1 }),
      ...joinedPoolSlices({ flavour, ...mcsOnly, n: 2 }),
      slice({ flavour, ...frontendOnly, role: 'frontend', endpoints: [{ ip: '10.2.0.3' }] }),
      slice({ flavour, ...frontendOnlyUnregistered, role: 'frontend', endpoints: [{ ip: '10.2.0.4' }] }),
      slice({ flavour, ...otherCluster, role: 'relay', endpoints: [{ ip: '10.1.0.5' }] }),
    ]) {
      service.fake.add(object);
    }
    for (const pool of [both, leaseOnly, frontendOnly]) await service.heartbeat(pool);

    await eventually(async () =>
      expect(await debugStates(service)).toEqual({
        [poolKeyOf(both)]: 'live',
        [poolKeyOf(mcsOnly)]: 'unregistered',
        [poolKeyOf(leaseOnly)]: 'one-sided',
        [poolKeyOf(frontendOnly)]: 'one-sided',
        [poolKeyOf(frontendOnlyUnregistered)]: 'absent',
        [poolKeyOf(otherCluster)]: 'unregistered',
      }),
    );
    const list = await service.pools();
    expect(list.complete).toBe(true);
    // From the lease: every field of the registration but its own `relay` and `frontends`; those from MCS.
    const { relay: _relay, frontends: _frontends, ...fromLease } = registrationFor(both);
    expect(list.pools).toEqual([{ ...fromLease, relays: [relayUrl(1)], frontends: [frontendUrl(1)], state: 'live' }]);
    expect(list.pools[0]).toMatchObject({ cluster_id: 'gpu-east-1', name: 'both', model: 'org/both' });
    const debug = await service.debug();
    // /debug shows what each side said, the registration as sent.
    const bothDebug = debug.pools.find((p) => p.pool === poolKeyOf(both))!;
    expect(bothDebug.registration).toMatchObject({ frontends: ['http://192.0.2.10:8000'], relay: 'http://192.0.2.20:9000' });
    expect(bothDebug.relays).toEqual([relayUrl(1)]);
  });

  it('an endpoint counts only when ready is not false', async () => {
    const notReady = ref('not-ready');
    const readyAbsent = ref('ready-absent');
    const service = await startMcsService({ redis, flavour });
    service.fake.add(slice({ flavour, ...notReady, role: 'relay', endpoints: [{ ip: '10.1.0.1', ready: false }] }));
    service.fake.add(slice({ flavour, ...notReady, role: 'frontend', endpoints: [{ ip: '10.2.0.1' }] }));
    service.fake.add(slice({ flavour, ...readyAbsent, role: 'relay', endpoints: [{ ip: '10.1.0.2', ready: null }] }));
    service.fake.add(
      slice({
        flavour,
        ...readyAbsent,
        role: 'frontend',
        endpoints: [{ ip: '10.2.0.2', ready: null, uid: null }, { ip: '10.2.0.3', ready: false }],
      }),
    );
    await service.heartbeat(notReady);
    await service.heartbeat(readyAbsent);

    await eventually(async () =>
      expect((await service.pools()).pools).toMatchObject([
        { name: 'ready-absent', relays: [relayUrl(2)], frontends: [frontendUrl(2)], state: 'live' },
      ]),
    );
    await waitFor(() => service.stateOf(poolKeyOf(notReady)) === 'one-sided', { message: 'not-ready one-sided' });
  });

  it('a lapsed lease drops a pool MCS still lists as Ready (lapsed); a new heartbeat brings it back', async () => {
    const joined = ref('joined');
    const leaseOnly = ref('lease-only');
    const service = await startMcsService({ redis, flavour, leaseMs: 600 });
    for (const object of joinedPoolSlices({ flavour, ...joined, n: 1 })) service.fake.add(object);
    await waitFor(() => service.stateOf(poolKeyOf(joined)) === 'unregistered', { message: 'unregistered' });
    const stream = await service.watch();
    const beforeBeat = Date.now();
    await service.heartbeat(joined);
    await service.heartbeat(leaseOnly);
    await waitFor(async () => (await listedNames(service)).includes(poolKeyOf(joined)), { message: 'joined listed' });

    // No more heartbeats: the lease lapses on Redis's clock although MCS still shows the relay Ready.
    await waitFor(async () => (await listedNames(service)).length === 0, { timeoutMs: 3000, message: 'the pool to leave' });
    // Not before the lease ran out on the store's clock (measured from before the heartbeat was sent).
    expect(Date.now() - beforeBeat).toBeGreaterThanOrEqual(600);
    expect(service.stateOf(poolKeyOf(joined))).toBe('lapsed');
    expect(service.source.stats.synced).toBe(true);
    expect(stream.of('delete').map((m) => m.data)).toEqual([
      expect.objectContaining({ pool: { cluster_id: 'gpu-east-1', namespace: 'llm', name: 'joined' } }),
    ]);
    // A pool only its lease listed leaves altogether: neither side lists it.
    await waitFor(() => service.stateOf(poolKeyOf(leaseOnly)) === 'absent', { message: 'lease-only absent' });

    await service.heartbeat(joined);
    await waitFor(async () => (await listedNames(service)).includes(poolKeyOf(joined)), { message: 'listed again' });
    expect(service.stateOf(poolKeyOf(joined))).toBe('live');
    expect(stream.of('upsert').at(-1)?.data).toMatchObject({ pool: { name: 'joined', state: 'live', relays: [relayUrl(1)] } });
  });

  it('follows watch events from both sides', async () => {
    const pool = ref('evented');
    const service = await startMcsService({ redis, flavour });
    await waitFor(async () => (await service.pools()).complete, { message: 'complete' });
    const stream = await service.watch();
    const key = poolKeyOf(pool);

    // Lease side first: one-sided, nothing listed.
    await service.heartbeat(pool);
    await waitFor(() => service.stateOf(key) === 'one-sided', { message: 'one-sided' });
    // Kubernetes side: the relay and then the frontend appear as watch events.
    const [relay, frontend] = joinedPoolSlices({ flavour, ...pool, n: 7 }) as [ReturnType<typeof slice>, ReturnType<typeof slice>];
    service.fake.add(relay);
    await waitFor(() => service.stateOf(key) === 'frontendless', { message: 'frontendless' });
    service.fake.add(frontend);
    await waitFor(() => service.stateOf(key) === 'live', { message: 'live' });
    // A new registration content from the lease side is an upsert.
    await service.heartbeat(pool, { model: 'org/evented-v2' });
    await waitFor(() => stream.of('upsert').some((m) => (m.data as { pool: { model: string } }).pool.model === 'org/evented-v2'), {
      message: 'the model change',
    });
    // The relay goes unready (a watch MODIFIED): the pool leaves with a delete, and comes back.
    const unready = slice({ flavour, ...pool, role: 'relay', endpoints: [{ ip: '10.1.0.7', ready: false }] });
    service.fake.modify(unready);
    await waitFor(() => service.stateOf(key) === 'one-sided', { message: 'one-sided again' });
    service.fake.modify(relay);
    await waitFor(() => service.stateOf(key) === 'live', { message: 'live again' });
    // The actor is live before its upsert has crossed the stream: wait for the stream too.
    await waitFor(() => stream.messages.filter((m) => m.event !== 'resync').length >= 5, { message: 'the last upsert' });

    const events = stream.messages.filter((m) => m.event !== 'resync');
    expect(events.map((m) => `${m.event}:${(m.data as { pool: { state?: string } }).pool.state ?? '-'}`)).toEqual([
      'upsert:frontendless',
      'upsert:live',
      'upsert:live',
      'delete:-',
      'upsert:live',
    ]);
    expect((events[2]!.data as { pool: { model: string; frontends: string[] } }).pool).toMatchObject({
      model: 'org/evented-v2',
      frontends: [frontendUrl(7)],
    });
    expect(service.source.stats).toMatchObject({ lists: 1, failures: 0 });
  });

  it('a relist (410) that drops a joined pool removes it through the next resync without a delete; a pool neither side lists leaves', async () => {
    const dropped = ref('dropped');
    const kept = ref('kept');
    const mcsOnly = ref('mcs-only');
    // A long grace: the re-watch must not look synced before its 410 line arrives.
    const service = await startMcsService({ redis, flavour, rewatchGraceMs: 5000 });
    for (const object of [
      ...joinedPoolSlices({ flavour, ...dropped, n: 1 }),
      ...joinedPoolSlices({ flavour, ...kept, n: 2 }),
      slice({ flavour, ...mcsOnly, role: 'relay', endpoints: [{ ip: '10.1.0.3' }] }),
    ]) {
      service.fake.add(object);
    }
    await service.heartbeat(dropped);
    await service.heartbeat(kept);
    await waitFor(async () => (await listedNames(service)).length === 2 && (await service.pools()).complete, {
      message: 'both listed',
    });
    expect(service.stateOf(poolKeyOf(mcsOnly))).toBe('unregistered');
    const stream = await service.watch();
    await waitFor(() => stream.of('resync').length === 1, { message: 'the first resync' });

    // While the watch is down, the dropped pool's relay slice and the MCS-only pool go, and the watch cache
    // compacts past the source's resourceVersion: the re-watch gets 410, and only a relist tells.
    service.fake.dropWatches();
    service.fake.remove('llm', relaySliceName(flavour, dropped));
    service.fake.remove('llm', relaySliceName(flavour, mcsOnly));
    service.fake.compact();
    await waitFor(() => service.source.stats.lists === 2 && service.source.stats.synced, { message: 'the relist' });
    await waitFor(async () => (await service.pools()).complete, { message: 'complete again' });

    expect(service.source.stats.expired).toBe(1);
    expect(await listedNames(service)).toEqual([poolKeyOf(kept)]);
    expect(stream.of('delete')).toEqual([]);
    expect(stream.of('upsert')).toEqual([]);
    const resyncs = stream.of('resync').map((m) => m.data as { complete: boolean; pools: Array<{ name: string }> });
    const dropping = resyncs.findIndex((r) => !r.pools.some((p) => p.name === 'dropped'));
    expect(dropping).toBeGreaterThan(0);
    expect(resyncs[dropping]!.pools.map((p) => p.name)).toEqual(['kept']);
    expect(resyncs.at(-1)).toMatchObject({ complete: true, pools: [{ name: 'kept' }] });
    // Between the drop and the relist the view was never complete: routers kept what they knew.
    expect(resyncs.slice(1, dropping).map((r) => r.complete)).toEqual(resyncs.slice(1, dropping).map(() => false));
    expect(resyncs.slice(1, dropping).length).toBeGreaterThan(0);
    // The lease still holds: one-sided. Neither side lists the MCS-only pool any more: absent.
    expect(service.stateOf(poolKeyOf(dropped))).toBe('one-sided');
    expect(service.stateOf(poolKeyOf(mcsOnly))).toBe('absent');
    const history = (await service.debugPool(poolKeyOf(mcsOnly))).history.map((h) => `${h.from}→${h.to}`);
    expect(history).toEqual(['absent→unregistered', 'unregistered→absent']);
  });
});

function relaySliceName(flavour: (typeof FLAVOURS)[number], ref: PoolRef): string {
  return slice({ flavour, ...ref, role: 'relay', endpoints: [] }).metadata.name;
}
