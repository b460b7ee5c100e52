// The Global Router Service's slices in the slice view (docs/contract.md §10): named by
// --router-service-name, kept out of the pools, their routers computed on every relist and change, and
// a change of the router list said once (routersChanged).
import { describe, expect, it } from 'vitest';
import { PoolSliceView } from '../../src/kube/slice-view.js';
import type { EndpointSlice } from '../../src/kube/slice.js';
import { captureLogs } from '../support/logs.js';
import { DEFAULT_SUFFIXES, fixtureSlice, version } from './helpers.js';

const relay = fixtureSlice('mcs/relay-ready.json');
const LLAMA = 'gpu-east-1/dynamo/llama-70b';

/** The relay fixture as a slice of the Global Router Service, with one Ready router pod per address. */
function routerSlice(name: string, addresses: string[]): EndpointSlice {
  return version(relay, '1', (copy) => {
    copy.metadata.name = name;
    copy.metadata.labels!['multicluster.kubernetes.io/service-name'] = 'global-router';
    delete copy.metadata.labels!['nvidia.com/dynamo-graph-deployment-name'];
    copy.endpoints = addresses.map((address, i) => ({
      addresses: [address],
      conditions: { ready: true },
      targetRef: { kind: 'Pod', namespace: 'routing', name: `${name}-${i}`, uid: `${name}-${i}` },
    }));
  });
}

function newView(routers: boolean) {
  const { logger } = captureLogs();
  return new PoolSliceView({
    mode: 'mcs',
    ...DEFAULT_SUFFIXES,
    frontendPortName: 'http',
    ...(routers ? { routerServiceName: 'global-router', routerPortName: 'relay' } : {}),
    logger,
  });
}

describe('PoolSliceView: the routers', () => {
  it('lists the routers of a relist beside the pools, never as a pool, and says the change once', () => {
    const view = newView(true);
    const pools = view.relist([relay, routerSlice('gr', ['10.1.0.1', '10.1.0.2'])]);
    expect([...pools.keys()]).toEqual([LLAMA]);
    expect(view.routers()).toEqual([
      { id: 'gr-0', url: 'http://10.1.0.1:9000' },
      { id: 'gr-1', url: 'http://10.1.0.2:9000' },
    ]);
    expect(view.routersChanged()).toBe(true);
    expect(view.routersChanged()).toBe(false);
  });

  it('follows a router slice change, with no pool update; an unchanged list is no change', () => {
    const view = newView(true);
    const slice = routerSlice('gr', ['10.1.0.1', '10.1.0.2']);
    view.relist([relay, slice]);
    view.routersChanged();
    const fewer = version(slice, '2', (copy) => {
      copy.endpoints![1]!.conditions = { ready: false };
    });
    expect(view.apply({ type: 'MODIFIED', slice: fewer })).toEqual([]);
    expect(view.routers()).toEqual([{ id: 'gr-0', url: 'http://10.1.0.1:9000' }]);
    expect(view.routersChanged()).toBe(true);
    // A new resourceVersion that moves no router is no change.
    expect(view.apply({ type: 'MODIFIED', slice: version(fewer, '3') })).toEqual([]);
    expect(view.routersChanged()).toBe(false);
    view.apply({ type: 'DELETED', slice: fewer });
    expect(view.routers()).toEqual([]);
    expect(view.routersChanged()).toBe(true);
  });

  it('reads no routers without --router-service-name, and lists no pool for their slices either', () => {
    const view = newView(false);
    const pools = view.relist([relay, routerSlice('gr', ['10.1.0.1'])]);
    expect([...pools.keys()]).toEqual([LLAMA]);
    expect(view.routers()).toEqual([]);
  });
});
