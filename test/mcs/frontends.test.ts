// Frontends end to end (docs/contract.md §4): Ready endpoints of `<name>-frontend` slices, the TCP port named
// by --frontend-port-name only, never port 0, each pod once (IPv4 on a dual-stack pool, whichever family
// became Ready first, with or without targetRef), IPv6 bracketed; a pool whose frontend slice is deleted
// stays listed as `frontendless` with `frontends: []`.
import { afterEach, describe, expect, it } from 'vitest';
import type { SseReader } from '../support/sse.js';
import { useRedis } from '../support/use-redis.js';
import { eventually, waitFor } from '../support/wait.js';
import { startMcsService, stopMcsServices, type McsService, type PoolRef } from './support/mcs-service.js';
import { poolKeyOf, relayUrl, slice, type EndpointSpec, type Flavour, type SliceSpec } from './support/slices.js';

const redis = useRedis('mcs');
afterEach(stopMcsServices);

const ref = (pool: string): PoolRef => ({ cluster: 'gpu-east-1', namespace: 'llm', pool });

/** A service with `pools` registered and their PoolRelays Ready, and a watch stream opened first. */
async function withRelays(options: { flavour?: Flavour; frontendPortName?: string; pools: PoolRef[] }) {
  const flavour = options.flavour ?? 'mcs';
  const service = await startMcsService({ redis, flavour, frontendPortName: options.frontendPortName });
  const stream = await service.watch();
  options.pools.forEach((pool, i) => service.fake.add(slice({ flavour, ...pool, role: 'relay', endpoints: [{ ip: `10.1.0.${i + 1}` }] })));
  for (const pool of options.pools) await service.heartbeat(pool);
  for (const pool of options.pools) {
    await waitFor(() => service.stateOf(poolKeyOf(pool)) === 'frontendless', { message: `${pool.pool} frontendless` });
  }
  const frontend = (pool: PoolRef, spec: Omit<SliceSpec, 'flavour' | 'cluster' | 'namespace' | 'pool' | 'role'>) =>
    slice({ flavour, ...pool, role: 'frontend', ...spec });
  return { service, stream, frontend };
}

async function frontendsOf(service: McsService, pool: PoolRef): Promise<string[] | undefined> {
  return (await service.pools()).pools.find((p) => p.name === pool.pool)?.frontends;
}

/** Every frontends list the stream ever carried for the pool. */
function streamedFrontends(stream: SseReader, pool: PoolRef): string[][] {
  return stream.messages.flatMap((m) => {
    if (m.event === 'upsert') {
      const listed = (m.data as { pool: { name: string; frontends: string[] } }).pool;
      return listed.name === pool.pool ? [listed.frontends] : [];
    }
    if (m.event === 'resync') {
      const listed = (m.data as { pools: Array<{ name: string; frontends: string[] }> }).pools.find((p) => p.name === pool.pool);
      return listed ? [listed.frontends] : [];
    }
    return [];
  });
}

describe('frontends', () => {
  it('an IPv6-only pool lists bracketed http URLs', async () => {
    const pool = ref('v6-only');
    const { service, frontend } = await withRelays({ pools: [pool] });
    service.fake.add(
      frontend(pool, { addressType: 'IPv6', endpoints: [{ ip: 'fd00:a10:6:2::2f' }, { ip: 'fd00:a10:6:2::30' }] }),
    );
    await eventually(async () =>
      expect((await service.pools()).pools).toMatchObject([
        { name: 'v6-only', state: 'live', frontends: ['http://[fd00:a10:6:2::2f]:8000', 'http://[fd00:a10:6:2::30]:8000'] },
      ]),
    );
  });

  describe.each([
    { targetRef: true, first: 'IPv4' },
    { targetRef: true, first: 'IPv6' },
    { targetRef: false, first: 'IPv4' },
    { targetRef: false, first: 'IPv6' },
  ] as const)('a dual-stack pool (targetRef: $targetRef, $first Ready first)', ({ targetRef, first }) => {
    it.each<Flavour>(['mcs', 'karmada'])('lists each pod once, at its IPv4 address (%s)', async (flavour) => {
      const pool = ref('dual');
      const { service, stream, frontend } = await withRelays({ flavour, pools: [pool] });
      const pods = [
        { v4: '10.2.0.11', v6: 'fd00:10:2::11', uid: 'pod-a' },
        { v4: '10.2.0.12', v6: 'fd00:10:2::12', uid: 'pod-b' },
      ];
      const endpoints = (family: 'IPv4' | 'IPv6', ready: boolean): EndpointSpec[] =>
        pods.map((pod) => ({ ip: family === 'IPv4' ? pod.v4 : pod.v6, ready, uid: targetRef ? pod.uid : null }));
      const later = first === 'IPv4' ? 'IPv6' : 'IPv4';
      // Both slices exist; only the first family's endpoints are Ready.
      service.fake.add(frontend(pool, { addressType: first, endpoints: endpoints(first, true) }));
      service.fake.add(frontend(pool, { addressType: later, endpoints: endpoints(later, false) }));
      const firstUrls = first === 'IPv4' ? ['http://10.2.0.11:8000', 'http://10.2.0.12:8000'] : ['http://[fd00:10:2::11]:8000', 'http://[fd00:10:2::12]:8000'];
      await eventually(async () => expect(await frontendsOf(service, pool)).toEqual(firstUrls));
      const revisionBefore = service.join.view.revision;

      if (targetRef && first === 'IPv6') {
        // Pod a becomes Ready at IPv4 before pod b: each pod still once, a at IPv4, b at IPv6.
        service.fake.modify(frontend(pool, { addressType: 'IPv4', endpoints: [endpoints('IPv4', true)[0]!, endpoints('IPv4', false)[1]!] }));
        await eventually(async () => expect(await frontendsOf(service, pool)).toEqual(['http://10.2.0.11:8000', 'http://[fd00:10:2::12]:8000']));
      }

      // The other family becomes Ready: one URL per pod, at IPv4.
      service.fake.modify(frontend(pool, { addressType: later, endpoints: endpoints(later, true) }));
      await waitFor(() => service.source.stats.resourceVersion === service.fake.currentResourceVersion, { message: 'the event' });
      await eventually(async () => expect(await frontendsOf(service, pool)).toEqual(['http://10.2.0.11:8000', 'http://10.2.0.12:8000']));
      // Never both families of a pod at once, at any step the stream showed.
      for (const frontends of streamedFrontends(stream, pool)) expect(frontends.length).toBeLessThanOrEqual(2);
      // IPv4 Ready first: the IPv6 side becoming Ready changes nothing routers see.
      if (first === 'IPv4') expect(service.join.view.revision).toBe(revisionBefore);
      else expect(service.join.view.revision).not.toBe(revisionBefore);
    });
  });

  it('a pod in two slices of one family is listed once', async () => {
    const pool = ref('split');
    const { service, frontend } = await withRelays({ pools: [pool] });
    service.fake.add(frontend(pool, { index: 0, endpoints: [{ ip: '10.2.0.21', uid: 'pod-x' }, { ip: '10.2.0.22' }] }));
    service.fake.add(frontend(pool, { index: 1, endpoints: [{ ip: '10.2.0.21', uid: 'pod-x' }] }));
    await waitFor(() => service.source.stats.resourceVersion === service.fake.currentResourceVersion, { message: 'the events' });
    await eventually(async () => expect(await frontendsOf(service, pool)).toEqual(['http://10.2.0.21:8000', 'http://10.2.0.22:8000']));
  });

  it('uses only the TCP port named by --frontend-port-name, never port 0, and only Ready endpoints', async () => {
    const named = ref('named');
    const udp = ref('udp');
    const zero = ref('zero');
    const defaultName = ref('default-name');
    const { service, frontend } = await withRelays({ frontendPortName: 'web', pools: [named, udp, zero, defaultName] });
    service.fake.add(
      frontend(named, {
        endpoints: [{ ip: '10.2.0.31' }, { ip: '10.2.0.32', ready: false }, { ip: '10.2.0.33', ready: null, uid: null }],
        ports: [
          { name: 'grpc', port: 8001 },
          { name: 'web', port: 8080 },
          { name: 'metrics', port: 9090 },
        ],
      }),
    );
    service.fake.add(frontend(udp, { endpoints: [{ ip: '10.2.0.41' }], ports: [{ name: 'web', port: 8080, protocol: 'UDP' }] }));
    service.fake.add(frontend(zero, { endpoints: [{ ip: '10.2.0.51' }], ports: [{ name: 'web', port: 0 }] }));
    service.fake.add(frontend(defaultName, { endpoints: [{ ip: '10.2.0.61' }], ports: [{ name: 'http', port: 8000 }] }));
    await waitFor(() => service.source.stats.resourceVersion === service.fake.currentResourceVersion, { message: 'the events' });

    await eventually(async () =>
      expect((await service.pools()).pools.map((p) => [p.name, p.state, p.frontends])).toEqual([
        ['default-name', 'frontendless', []],
        ['named', 'live', ['http://10.2.0.31:8080', 'http://10.2.0.33:8080']],
        ['udp', 'frontendless', []],
        ['zero', 'frontendless', []],
      ]),
    );
    // Events on a slice that still lacks the port do not repeat its warning.
    service.fake.modify(frontend(zero, { endpoints: [{ ip: '10.2.0.51' }, { ip: '10.2.0.52' }], ports: [{ name: 'web', port: 0 }] }));
    service.fake.modify(frontend(zero, { endpoints: [{ ip: '10.2.0.53' }], ports: [{ name: 'web', port: 0 }] }));
    await waitFor(() => service.source.stats.resourceVersion === service.fake.currentResourceVersion, { message: 'the changes' });
    for (const pool of [udp, zero, defaultName]) {
      const debug = await service.debugPool(poolKeyOf(pool));
      expect(debug.frontend_slices_with_port).toBe(false);
      // The slice without a usable port was logged once, naming the port.
      const portWarnings = service.warningsFor(poolKeyOf(pool)).filter((l) => typeof l.slice === 'string');
      expect(portWarnings).toHaveLength(1);
      expect(portWarnings[0]).toMatchObject({ port_name: 'web' });
    }
  });

  it('a deleted frontend slice leaves a live pool frontendless, with frontends: []', async () => {
    const pool = ref('loses-frontend');
    const { service, stream, frontend } = await withRelays({ pools: [pool] });
    const frontendSlice = frontend(pool, { endpoints: [{ ip: '10.2.0.71' }] });
    service.fake.add(frontendSlice);
    await eventually(async () => expect(await frontendsOf(service, pool)).toEqual(['http://10.2.0.71:8000']));

    service.fake.remove(frontendSlice.metadata.namespace, frontendSlice.metadata.name);
    await eventually(async () =>
      expect((await service.pools()).pools).toEqual([
        expect.objectContaining({ name: 'loses-frontend', state: 'frontendless', frontends: [], relays: [relayUrl(1)] }),
      ]),
    );
    const last = stream.of('upsert').at(-1)?.data as { pool: { state: string; frontends: string[] } };
    expect(last.pool).toMatchObject({ state: 'frontendless', frontends: [] });
    expect(stream.of('delete')).toEqual([]);
    expect((await service.debugPool(poolKeyOf(pool))).frontend_slices_with_port).toBe(false);
  });
});
