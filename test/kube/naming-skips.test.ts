// Every way nameSlice declines a slice (docs/contract.md §2; test/kube/fixtures/README.md §4), with the
// reason it gives and whether the skip hides what looks like a pool's slice (then the source warns once,
// with that reason, see README "Warnings (MCS modes)").
import { describe, expect, it } from 'vitest';
import { nameSlice, type NamingOptions } from '../../src/kube/naming.js';
import type { EndpointSlice } from '../../src/kube/slice.js';
import { DEFAULT_SUFFIXES, fixtureSlice } from './helpers.js';

const mcs: NamingOptions = { mode: 'mcs', ...DEFAULT_SUFFIXES };
const karmada: NamingOptions = { mode: 'karmada', ...DEFAULT_SUFFIXES };

type Metadata = EndpointSlice['metadata'];
type Change = (metadata: Metadata) => void;

/** A copy of a fixture slice with its metadata changed, one change after the other. */
function edited(path: string, ...changes: Change[]): EndpointSlice {
  const copy = structuredClone(fixtureSlice(path));
  for (const change of changes) change(copy.metadata);
  return copy;
}
const setLabel = (name: string, value: string): Change => (m) => void (m.labels![name] = value);
const dropLabel = (name: string): Change => (m) => void delete m.labels![name];
const setAnnotation = (name: string, value: string): Change => (m) => void (m.annotations![name] = value);
const dropAnnotation = (name: string): Change => (m) => void delete m.annotations![name];
const rename = (name: string): Change => (m) => void (m.name = name);

const IMPORTED = 'karmada/cp-relay-ready.json';
const MEMBER_COPY = 'karmada/member-serviceimport-copy.json';
const DISPATCHED = 'karmada/member-multiclusterservice-dispatch.json';
const MCS_SERVICE_NAME = 'multicluster.kubernetes.io/service-name';
const SERVICE_NAME = 'kubernetes.io/service-name';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const WORK_NAMESPACE = 'work.karmada.io/namespace';
const PROVISION_CLUSTER = 'endpointslice.karmada.io/provision-cluster';

/** The pool the Karmada fixtures name in member-us-east-1, through its relay or its frontend service. */
const named = (service: string, role: 'relay' | 'frontend') => ({
  kind: 'pool',
  cluster: 'member-us-east-1',
  namespace: 'dynamo',
  service,
  role,
  name: 'llama-70b',
  key: 'member-us-east-1/dynamo/llama-70b',
});
/** A skip: the reason nameSlice gives, and whether the source warns of it. */
const skip = (reason: string, warn = false) => ({ kind: 'skip', reason, warn });

describe('mcs: skipped slices', () => {
  it('a slice without the KEP labels, silently', () => {
    const slice = edited('mcs/relay-ready.json', dropLabel(MCS_SERVICE_NAME));
    expect(nameSlice(slice, mcs)).toEqual(skip('not an MCS-imported slice (no service-name/source-cluster labels)'));
  });

  it('a Lighthouse broker copy, silently; a slice in its source namespace is used', () => {
    const broker = edited('mcs/relay-ready.json', (m) => void (m.namespace = 'submariner-k8s-broker'));
    expect(nameSlice(broker, mcs)).toEqual(skip('Lighthouse broker copy (sourceNamespace differs from the slice namespace)'));
    const own = fixtureSlice('mcs/relay-ready.json');
    expect(own.metadata.labels?.['lighthouse.submariner.io/sourceNamespace']).toBe(own.metadata.namespace);
    expect(nameSlice(own, mcs).kind).toBe('pool');
  });

  it('a service matching neither suffix, or only a suffix, silently', () => {
    const service = (name: string) => edited('mcs/relay-ready.json', setLabel(MCS_SERVICE_NAME, name));
    expect(nameSlice(service('global-router'), mcs)).toEqual(skip('service global-router matches neither suffix'));
    expect(nameSlice(service('-pool-relay'), mcs)).toEqual(skip('service -pool-relay is only the suffix'));
    expect(nameSlice(service('-frontend'), mcs)).toEqual(skip('service -frontend is only the suffix'));
  });
});

describe('karmada: skipped slices', () => {
  // The slices Karmada declined for one reason, with the reason and whether it warns.
  it.each([
    {
      title: 'ServiceImport flow: a derived service matching neither suffix, silently',
      slice: edited(IMPORTED, setLabel(SERVICE_NAME, 'derived-global-router')),
      skip: skip('service global-router matches neither suffix'),
    },
    {
      title: 'ServiceImport flow: a derived service that is only the suffix, silently',
      slice: edited(IMPORTED, setLabel(SERVICE_NAME, 'derived--pool-relay')),
      skip: skip('service -pool-relay is only the suffix'),
    },
    {
      title: 'a member copy whose name does not read imported-<cluster>-<service>-xxxxx, with a warning',
      slice: edited(MEMBER_COPY, rename('llama-70b-pool-relay-x7k2q')),
      skip: skip('Karmada member copy whose name does not read imported-<cluster>-llama-70b-pool-relay-xxxxx, so its source cluster is unknown', true),
    },
    {
      title: 'control plane: neither a usable annotation nor an imported- name, with a warning',
      slice: edited(IMPORTED, dropAnnotation(WORK_NAMESPACE), rename('llama-70b-pool-relay-x7k2q')),
      skip: skip('Karmada-imported slice without a usable work.karmada.io/namespace annotation or imported-<cluster>- name', true),
    },
    {
      title: 'MultiClusterService flow: no service-name label, with a warning',
      slice: edited(DISPATCHED, dropLabel(SERVICE_NAME)),
      skip: skip('Karmada-dispatched slice without a kubernetes.io/service-name label', true),
    },
    {
      title: 'MultiClusterService flow: a service matching neither suffix, silently',
      slice: edited(DISPATCHED, setLabel(SERVICE_NAME, 'global-router')),
      skip: skip('service global-router matches neither suffix'),
    },
    {
      title: 'MultiClusterService flow without the annotation: a name that does not fit, with a warning',
      slice: edited(DISPATCHED, dropAnnotation(PROVISION_CLUSTER), rename('llama-70b-frontend-manual')),
      skip: skip('Karmada-dispatched slice without endpointslice.karmada.io/provision-cluster whose name does not read <cluster>-llama-70b-frontend-xxxxx', true),
    },
  ])('$title', ({ slice, skip }) => {
    expect(nameSlice(slice, karmada)).toEqual(skip);
  });

  it('a slice no Karmada controller manages, silently, naming its manager', () => {
    const native = edited(IMPORTED, setLabel(MANAGED_BY, 'endpointslice-controller.k8s.io'));
    expect(nameSlice(native, karmada)).toEqual(skip('not imported by Karmada (managed-by endpointslice-controller.k8s.io)'));
    const unmanaged = edited(IMPORTED, dropLabel(MANAGED_BY));
    expect(nameSlice(unmanaged, karmada)).toEqual(skip('not imported by Karmada (managed-by unset)'));
  });

  it('ServiceImport flow: a service-name label that is not derived-<service>, with a warning', () => {
    for (const [label, shown] of [
      ['llama-70b-pool-relay', '"llama-70b-pool-relay"'],
      ['derived-', '"derived-"'],
      [undefined, '""'],
    ] as const) {
      const slice = edited(IMPORTED, label === undefined ? dropLabel(SERVICE_NAME) : setLabel(SERVICE_NAME, label));
      expect(nameSlice(slice, karmada)).toEqual(skip(`Karmada-imported slice whose service-name label ${shown} lacks "derived-"`, true));
    }
  });

  it('a member copy is read only when karmada.io/managed is "true"', () => {
    // Any other value is a control-plane slice: the annotation names the cluster.
    const slice = edited(MEMBER_COPY, setLabel('karmada.io/managed', 'false'));
    expect(nameSlice(slice, karmada)).toMatchObject({ kind: 'pool', key: 'member-eu-west-2/dynamo/llama-70b' });
  });

  it('control plane: an annotation that is not karmada-es-<cluster> falls back to the name, with a warning', () => {
    for (const annotation of ['member-us-east-1', 'karmada-es-', '']) {
      const slice = edited(IMPORTED, setAnnotation(WORK_NAMESPACE, annotation));
      expect(nameSlice(slice, karmada)).toEqual({
        ...named('llama-70b-pool-relay', 'relay'),
        warning: 'annotation work.karmada.io/namespace missing or not karmada-es-<cluster>; using the cluster in the slice name',
      });
    }
  });

  it('control plane: the annotation with a matching name gives no warning', () => {
    expect(nameSlice(fixtureSlice(IMPORTED), karmada)).toEqual(named('llama-70b-pool-relay', 'relay'));
  });

  it('control plane: the annotation wins over a name of another cluster, and the warning says so', () => {
    const slice = edited(IMPORTED, rename('imported-member-eu-west-2-llama-70b-pool-relay-x7k2q'));
    expect(nameSlice(slice, karmada)).toMatchObject({
      kind: 'pool',
      key: 'member-us-east-1/dynamo/llama-70b',
      warning: 'slice name does not start with imported-member-us-east-1-; using the cluster of annotation work.karmada.io/namespace',
    });
  });

  it('control plane: the annotation names the cluster, but a derived service of neither suffix is skipped', () => {
    const slice = edited(IMPORTED, setLabel(SERVICE_NAME, 'derived-llama-70b-metrics'));
    expect(nameSlice(slice, karmada)).toMatchObject({ kind: 'skip', warn: false });
  });

  it('MultiClusterService flow: the annotation with a matching name gives no warning; another name warns', () => {
    expect(nameSlice(fixtureSlice(DISPATCHED), karmada)).toEqual(named('llama-70b-frontend', 'frontend'));
    const renamed = edited(DISPATCHED, rename('member-us-east-12-llama-70b-frontend-4kz9w'), setAnnotation(PROVISION_CLUSTER, 'member-us-east-1'));
    // `member-us-east-12-…` starts with `member-us-east-1` but not with `member-us-east-1-`.
    expect(nameSlice(renamed, karmada)).toMatchObject({
      key: 'member-us-east-1/dynamo/llama-70b',
      warning: 'slice name does not start with member-us-east-1-; using annotation endpointslice.karmada.io/provision-cluster',
    });
  });
});
