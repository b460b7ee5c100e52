// Edge cases of the pure slice logic (docs/contract.md §2, §4; docs/design.md "Watch loops"): how pods are
// told apart, which ports count, which names read as a cluster, and the reasons the loop logs.
import { describe, expect, it } from 'vitest';
import type { WatchEnd } from '../../src/kube/slice-api.js';
import { computePoolEndpoints, type RoledSlice } from '../../src/kube/endpoints.js';
import { clusterFromGeneratedName, nameSlice, type NamingOptions } from '../../src/kube/naming.js';
import { SliceCache } from '../../src/kube/slice-cache.js';
import type { EndpointSlice, SliceEndpoint } from '../../src/kube/slice.js';
import { classifyWatch, listFailureReason } from '../../src/kube/watch-outcome.js';
import { DEFAULT_SUFFIXES, fixtureSlice } from './helpers.js';

const base = fixtureSlice('mcs/frontend-ipv4.json');

function frontendSlice(endpoints: SliceEndpoint[], change?: (copy: EndpointSlice) => void): RoledSlice {
  const copy: EndpointSlice = structuredClone(base);
  copy.endpoints = endpoints;
  change?.(copy);
  return { role: 'frontend', slice: copy };
}
const frontends = (...slices: RoledSlice[]) => computePoolEndpoints(slices, { frontendPortName: 'http' }).endpoints.frontends;

describe('frontend pods', () => {
  it('a pod recreated under the same name (a new uid) is another pod while both are listed', () => {
    const ref = (uid: string) => ({ kind: 'Pod', namespace: 'dynamo', name: 'frontend-0', uid });
    expect(frontends(frontendSlice([{ addresses: ['10.0.0.1'], targetRef: ref('u1') }, { addresses: ['10.0.0.2'], targetRef: ref('u2') }]))).toEqual([
      'http://10.0.0.1:8000',
      'http://10.0.0.2:8000',
    ]);
  });

  it('targetRefs of different kinds with the same name are different objects', () => {
    const endpoints = [
      { addresses: ['10.0.0.1'], targetRef: { kind: 'Pod', namespace: 'dynamo', name: 'x' } },
      { addresses: ['10.0.0.2'], targetRef: { kind: 'VirtualMachineInstance', namespace: 'dynamo', name: 'x' } },
    ];
    expect(frontends(frontendSlice(endpoints))).toEqual(['http://10.0.0.1:8000', 'http://10.0.0.2:8000']);
  });

  it('a missing kind or namespace reads as empty', () => {
    const endpoints = [
      { addresses: ['10.0.0.2'], targetRef: { name: 'x' } },
      { addresses: ['10.0.0.1'], targetRef: { kind: '', namespace: '', name: 'x' } },
    ];
    expect(frontends(frontendSlice(endpoints))).toEqual(['http://10.0.0.1:8000']);
  });

  it('an endpoint without addresses is left out; a slice without endpoints lists none', () => {
    expect(frontends(frontendSlice([{ conditions: { ready: true } }, { addresses: [] }, { addresses: ['10.0.0.1'] }]))).toEqual([
      'http://10.0.0.1:8000',
    ]);
    expect(frontends(frontendSlice([], (copy) => void (copy.endpoints = null)))).toEqual([]);
  });

  it('a relay slice: a port without a number does not count as its first TCP port', () => {
    const relay: RoledSlice = {
      role: 'relay',
      slice: { ...structuredClone(base), ports: [{ name: 'metrics', protocol: 'TCP' }, { name: 'grpc', protocol: 'TCP', port: 7000 }], endpoints: [{ addresses: ['10.0.0.9'] }] },
    };
    expect(computePoolEndpoints([relay], { frontendPortName: 'http' }).endpoints.relays).toEqual(['http://10.0.0.9:7000']);
  });
});

describe('naming: the checks that decide between skips', () => {
  const mcs: NamingOptions = { mode: 'mcs', ...DEFAULT_SUFFIXES };
  const karmada: NamingOptions = { mode: 'karmada', ...DEFAULT_SUFFIXES };
  const edited = (path: string, change: (m: EndpointSlice['metadata']) => void) => {
    const copy = structuredClone(fixtureSlice(path));
    change(copy.metadata);
    return copy;
  };

  it('a slice without labels or annotations is skipped, in either mode', () => {
    const bare = edited('karmada/cp-relay-ready.json', (m) => {
      m.labels = null;
      m.annotations = null;
    });
    expect(nameSlice(bare, mcs)).toMatchObject({ kind: 'skip', warn: false });
    expect(nameSlice(bare, karmada)).toMatchObject({ kind: 'skip', warn: false });
    const noAnnotations = edited('karmada/cp-relay-ready.json', (m) => {
      m.annotations = null;
    });
    expect(nameSlice(noAnnotations, karmada)).toMatchObject({ kind: 'pool', key: 'member-us-east-1/dynamo/llama-70b' });
  });

  it('mcs: a slice without the Lighthouse label is used', () => {
    const slice = edited('mcs/relay-ready.json', (m) => {
      delete m.labels!['lighthouse.submariner.io/sourceNamespace'];
    });
    expect(nameSlice(slice, mcs)).toMatchObject({ kind: 'pool', key: 'gpu-east-1/dynamo/llama-70b' });
  });

  it('a member copy of a service of neither suffix is skipped silently, before its name is read', () => {
    const slice = edited('karmada/member-serviceimport-copy.json', (m) => {
      m.labels!['kubernetes.io/service-name'] = 'derived-global-router';
    });
    expect(nameSlice(slice, karmada)).toEqual({ kind: 'skip', reason: 'service global-router matches neither suffix', warn: false });
  });

  it('a dispatched slice of a service of neither suffix is skipped silently, before its name is read', () => {
    const slice = edited('karmada/member-multiclusterservice-dispatch.json', (m) => {
      m.labels!['kubernetes.io/service-name'] = 'global-router';
      delete m.annotations!['endpointslice.karmada.io/provision-cluster'];
    });
    expect(nameSlice(slice, karmada)).toEqual({ kind: 'skip', reason: 'service global-router matches neither suffix', warn: false });
  });

  it('a skipped slice carries no warning about its name, in every flow', () => {
    const onlySuffix = { kind: 'skip', reason: 'service -pool-relay is only the suffix', warn: false };
    const annotated = edited('karmada/cp-relay-ready.json', (m) => {
      m.labels!['kubernetes.io/service-name'] = 'derived--pool-relay';
      m.name = 'something-else';
    });
    expect(nameSlice(annotated, karmada)).toEqual(onlySuffix);
    const byName = edited('karmada/cp-relay-ready.json', (m) => {
      m.labels!['kubernetes.io/service-name'] = 'derived--pool-relay';
      delete m.annotations!['work.karmada.io/namespace'];
      m.name = 'imported-member-us-east-1--pool-relay-x7k2q';
    });
    expect(nameSlice(byName, karmada)).toEqual(onlySuffix);
    const dispatched = edited('karmada/member-multiclusterservice-dispatch.json', (m) => {
      m.labels!['kubernetes.io/service-name'] = '-frontend';
      m.name = 'something-else';
    });
    expect(nameSlice(dispatched, karmada)).toEqual({ kind: 'skip', reason: 'service -frontend is only the suffix', warn: false });
  });

  it('clusterFromGeneratedName: a name without the prefix is no cluster, however it ends', () => {
    expect(clusterFromGeneratedName('member-us-east-1-svc-b7k2q', 'imported-', 'svc')).toBeUndefined();
    expect(clusterFromGeneratedName('imported-member-us-east-1-svc-b7k2q', 'imported-', 'svc')).toBe('member-us-east-1');
  });

  it('clusterFromGeneratedName: a service with regular expression characters matches only itself', () => {
    expect(clusterFromGeneratedName('imported-c-a.b-svc-b7k2q', 'imported-', 'a.b-svc')).toBe('c');
    expect(clusterFromGeneratedName('imported-c-axb-svc-b7k2q', 'imported-', 'a.b-svc')).toBeUndefined();
  });
});

describe('the loop reasons', () => {
  it('a list failure with an HTTP code keeps the first 200 characters of the first line', () => {
    const error = Object.assign(new Error(`${'x'.repeat(300)}\nsecond line`), { code: 500 });
    expect(listFailureReason(error)).toBe(`listing EndpointSlices failed: HTTP 500: ${'x'.repeat(200)}`);
    expect(listFailureReason(new Error(`${'y'.repeat(300)}`))).toBe(`listing EndpointSlices failed: ${'y'.repeat(200)}`);
  });

  it('an HTTP refusal without a body ends its reason at the status', () => {
    const end: WatchEnd = { kind: 'status', status: 503, body: '' };
    expect(classifyWatch(end, undefined, { resume: '7', delivered: false, elapsedMs: 0 })).toEqual({
      kind: 'failed',
      resume: '7',
      retryReason: 'watch refused with HTTP 503:',
    });
  });
});

describe('the slice cache', () => {
  it('a slice without a resourceVersion counts as changed on every event', () => {
    const cache = new SliceCache(() => ({ key: 'c/ns/p', role: 'frontend' }));
    const slice = structuredClone(base);
    slice.metadata.resourceVersion = null;
    expect(cache.apply({ type: 'ADDED', slice })).toEqual(['c/ns/p']);
    expect(cache.apply({ type: 'MODIFIED', slice: structuredClone(slice) })).toEqual(['c/ns/p']);
  });
});
