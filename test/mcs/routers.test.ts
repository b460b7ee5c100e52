// MCS routers end to end (docs/contract.md §10), from the in-test Kubernetes API server through the one
// EndpointSlice source the pools are read from: the Ready endpoints of the imported Global Router Service
// on the port named by --router-port-name, one router per pod (its name from targetRef, else its address),
// IPv4 preferred on a dual-stack pod, IPv6 bracketed, https:// when the port's appProtocol says https; a
// slice without the port lists nothing; both flavours. Frontend ports with appProtocol https give https://
// frontend URLs.
import { afterEach, describe, expect, it } from 'vitest';
import { listRouters } from '../routers/support.js';
import { useRedis } from '../support/use-redis.js';
import { eventually, waitFor } from '../support/wait.js';
import { startMcsService, stopMcsServices, type PoolRef } from './support/mcs-service.js';
import { poolKeyOf, slice, type Flavour, type PortSpec, type SliceSpec } from './support/slices.js';

const redis = useRedis('mcs-routers');
afterEach(stopMcsServices);

/** A slice of the Global Router Service (`global-router`, no suffix) in `cluster`. */
const routerSlice = (flavour: Flavour, spec: Partial<SliceSpec> & Pick<SliceSpec, 'endpoints'>) =>
  slice({ flavour, cluster: 'gr-east-1', namespace: 'routing', pool: 'global-router', suffix: '', role: 'relay', ...spec });

describe.each<Flavour>(['mcs', 'karmada', 'karmada-dispatch'])('routers from the Global Router Service (%s)', (flavour) => {
  it('lists each Ready pod once, by its pod name, at its IPv4 address; IPv6-only bracketed; not-ready ones never', async () => {
    const service = await startMcsService({ redis, flavour });
    // Two dual-stack pods (one slice per family) and one pod not Ready.
    service.fake.add(routerSlice(flavour, { endpoints: [{ ip: '10.5.0.1', uid: 'a' }, { ip: '10.5.0.2', uid: 'b' }, { ip: '10.5.0.3', uid: 'c', ready: false }] }));
    service.fake.add(routerSlice(flavour, { addressType: 'IPv6', endpoints: [{ ip: 'fd00:5::1', uid: 'a' }, { ip: 'fd00:5::2', uid: 'b' }, { ip: 'fd00:5::9', uid: 'v6only' }] }));
    await eventually(async () => {
      const list = await listRouters(service.url);
      expect(list.complete).toBe(true);
      expect(list.routers).toEqual([
        { id: 'global-router-pod-a', url: 'http://10.5.0.1:9000', source: 'mcs' },
        { id: 'global-router-pod-b', url: 'http://10.5.0.2:9000', source: 'mcs' },
        { id: 'global-router-pod-v6only', url: 'http://[fd00:5::9]:9000', source: 'mcs' },
      ]);
    });
    // Pod b goes not Ready in both families: it leaves the list.
    service.fake.modify(routerSlice(flavour, { endpoints: [{ ip: '10.5.0.1', uid: 'a' }, { ip: '10.5.0.2', uid: 'b', ready: false }] }));
    service.fake.modify(routerSlice(flavour, { addressType: 'IPv6', endpoints: [{ ip: 'fd00:5::1', uid: 'a' }, { ip: 'fd00:5::2', uid: 'b', ready: false }, { ip: 'fd00:5::9', uid: 'v6only' }] }));
    await eventually(async () => expect((await listRouters(service.url)).routers.map((r) => r.id)).toEqual(['global-router-pod-a', 'global-router-pod-v6only']));
  });
});

describe('router and frontend ports', () => {
  it('takes the port named --router-port-name, https:// with appProtocol https, the address as the id without targetRef', async () => {
    const service = await startMcsService({ redis, routerPortName: 'grpc' });
    const ports: PortSpec[] = [
      { name: 'relay', port: 9000 },
      { name: 'grpc', port: 9443, appProtocol: 'https' },
    ];
    service.fake.add(routerSlice('mcs', { ports, endpoints: [{ ip: '10.6.0.1', uid: null }] }));
    await eventually(async () => expect((await listRouters(service.url)).routers).toEqual([{ id: '10.6.0.1', url: 'https://10.6.0.1:9443', source: 'mcs' }]));
  });

  it('lists nothing from a slice without the router port, and the list is still complete', async () => {
    const service = await startMcsService({ redis });
    service.fake.add(routerSlice('mcs', { ports: [{ name: 'metrics', port: 9100 }], endpoints: [{ ip: '10.7.0.1' }] }));
    // A relay slice of a pool afterwards: once its pool shows in /debug the router slice was read before it.
    const pool: PoolRef = { cluster: 'gpu-east-1', namespace: 'llm', pool: 'after' };
    service.fake.add(slice({ flavour: 'mcs', ...pool, role: 'relay', endpoints: [{ ip: '10.1.0.1' }] }));
    await waitFor(() => service.stateOf(poolKeyOf(pool)) !== undefined);
    const list = await waitFor(async () => {
      const body = await listRouters(service.url);
      return body.complete && body;
    });
    expect(list.routers).toEqual([]);
  });

  it('gives https:// frontend URLs for a frontend port with appProtocol https, http:// for any other', async () => {
    const service = await startMcsService({ redis });
    const tls: PoolRef = { cluster: 'gpu-east-1', namespace: 'llm', pool: 'tls' };
    const plain: PoolRef = { cluster: 'gpu-east-1', namespace: 'llm', pool: 'plain' };
    for (const [i, pool] of [tls, plain].entries()) {
      service.fake.add(slice({ flavour: 'mcs', ...pool, role: 'relay', endpoints: [{ ip: `10.1.0.${i + 1}` }] }));
      await service.heartbeat(pool);
    }
    service.fake.add(slice({ flavour: 'mcs', ...tls, role: 'frontend', ports: [{ name: 'http', port: 8443, appProtocol: 'https' }], endpoints: [{ ip: '10.2.0.1' }] }));
    service.fake.add(slice({ flavour: 'mcs', ...plain, role: 'frontend', ports: [{ name: 'http', port: 8000, appProtocol: 'kubernetes.io/h2c' }], endpoints: [{ ip: '10.2.0.2' }] }));
    await eventually(async () => {
      const pools = (await service.pools()).pools;
      expect(pools.map((p) => [p.name, p.frontends])).toEqual([
        ['plain', ['http://10.2.0.2:8000']],
        ['tls', ['https://10.2.0.1:8443']],
      ]);
    });
  });
});
