// Every way nameSlice declines a slice (docs/contract.md §2; test/kube/fixtures/README.md §4), with the
// reason it gives and whether the skip hides what looks like a pool's slice (then the source warns once,
// with that reason, see README "Warnings (MCS modes)").
import { describe, expect, it } from 'vitest';
import { nameSlice, type NamingOptions } from '../../src/kube/naming.js';
import type { EndpointSlice } from '../../src/kube/slice.js';
import { DEFAULT_SUFFIXES, fixtureSlice } from './helpers.js';

const mcs: NamingOptions = { mode: 'mcs', ...DEFAULT_SUFFIXES };
const karmada: NamingOptions = { mode: 'karmada', ...DEFAULT_SUFFIXES };

function edited(path: string, change: (metadata: EndpointSlice['metadata']) => void): EndpointSlice {
  const copy = structuredClone(fixtureSlice(path));
  change(copy.metadata);
  return copy;
}

const IMPORTED = 'karmada/cp-relay-ready.json';
const MEMBER_COPY = 'karmada/member-serviceimport-copy.json';
const DISPATCHED = 'karmada/member-multiclusterservice-dispatch.json';

describe('mcs: skipped slices', () => {
  it('a slice without the KEP labels, silently', () => {
    const slice = edited('mcs/relay-ready.json', (m) => {
      delete m.labels!['multicluster.kubernetes.io/service-name'];
    });
    expect(nameSlice(slice, mcs)).toEqual({
      kind: 'skip',
      reason: 'not an MCS-imported slice (no service-name/source-cluster labels)',
      warn: false,
    });
  });

  it('a Lighthouse broker copy, silently; a slice in its source namespace is used', () => {
    const broker = edited('mcs/relay-ready.json', (m) => {
      m.namespace = 'submariner-k8s-broker';
    });
    expect(nameSlice(broker, mcs)).toEqual({
      kind: 'skip',
      reason: 'Lighthouse broker copy (sourceNamespace differs from the slice namespace)',
      warn: false,
    });
    const own = fixtureSlice('mcs/relay-ready.json');
    expect(own.metadata.labels?.['lighthouse.submariner.io/sourceNamespace']).toBe(own.metadata.namespace);
    expect(nameSlice(own, mcs).kind).toBe('pool');
  });

  it('a service matching neither suffix, or only a suffix, silently', () => {
    const service = (name: string) =>
      edited('mcs/relay-ready.json', (m) => {
        m.labels!['multicluster.kubernetes.io/service-name'] = name;
      });
    expect(nameSlice(service('global-router'), mcs)).toEqual({ kind: 'skip', reason: 'service global-router matches neither suffix', warn: false });
    expect(nameSlice(service('-pool-relay'), mcs)).toEqual({ kind: 'skip', reason: 'service -pool-relay is only the suffix', warn: false });
    expect(nameSlice(service('-frontend'), mcs)).toEqual({ kind: 'skip', reason: 'service -frontend is only the suffix', warn: false });
  });
});

describe('karmada: skipped slices', () => {
  it('a slice no Karmada controller manages, silently, naming its manager', () => {
    const native = edited(IMPORTED, (m) => {
      m.labels!['endpointslice.kubernetes.io/managed-by'] = 'endpointslice-controller.k8s.io';
    });
    expect(nameSlice(native, karmada)).toEqual({
      kind: 'skip',
      reason: 'not imported by Karmada (managed-by endpointslice-controller.k8s.io)',
      warn: false,
    });
    const unmanaged = edited(IMPORTED, (m) => {
      delete m.labels!['endpointslice.kubernetes.io/managed-by'];
    });
    expect(nameSlice(unmanaged, karmada)).toEqual({ kind: 'skip', reason: 'not imported by Karmada (managed-by unset)', warn: false });
  });

  it('ServiceImport flow: a service-name label that is not derived-<service>, with a warning', () => {
    for (const [label, shown] of [
      ['llama-70b-pool-relay', '"llama-70b-pool-relay"'],
      ['derived-', '"derived-"'],
      [undefined, '""'],
    ] as const) {
      const slice = edited(IMPORTED, (m) => {
        if (label === undefined) delete m.labels!['kubernetes.io/service-name'];
        else m.labels!['kubernetes.io/service-name'] = label;
      });
      expect(nameSlice(slice, karmada)).toEqual({
        kind: 'skip',
        reason: `Karmada-imported slice whose service-name label ${shown} lacks "derived-"`,
        warn: true,
      });
    }
  });

  it('ServiceImport flow: a derived service matching neither suffix, silently', () => {
    const slice = edited(IMPORTED, (m) => {
      m.labels!['kubernetes.io/service-name'] = 'derived-global-router';
    });
    expect(nameSlice(slice, karmada)).toEqual({ kind: 'skip', reason: 'service global-router matches neither suffix', warn: false });
  });

  it('ServiceImport flow: a derived service that is only the suffix, silently', () => {
    const slice = edited(IMPORTED, (m) => {
      m.labels!['kubernetes.io/service-name'] = 'derived--pool-relay';
    });
    expect(nameSlice(slice, karmada)).toEqual({ kind: 'skip', reason: 'service -pool-relay is only the suffix', warn: false });
  });

  it('a member copy whose name does not read imported-<cluster>-<service>-xxxxx, with a warning', () => {
    const slice = edited(MEMBER_COPY, (m) => {
      m.name = 'llama-70b-pool-relay-x7k2q';
    });
    expect(nameSlice(slice, karmada)).toEqual({
      kind: 'skip',
      reason: 'Karmada member copy whose name does not read imported-<cluster>-llama-70b-pool-relay-xxxxx, so its source cluster is unknown',
      warn: true,
    });
  });

  it('a member copy is read only when karmada.io/managed is "true"', () => {
    // Any other value is a control-plane slice: the annotation names the cluster.
    const slice = edited(MEMBER_COPY, (m) => {
      m.labels!['karmada.io/managed'] = 'false';
    });
    expect(nameSlice(slice, karmada)).toMatchObject({ kind: 'pool', key: 'member-eu-west-2/dynamo/llama-70b' });
  });

  it('control plane: an annotation that is not karmada-es-<cluster> falls back to the name, with a warning', () => {
    for (const annotation of ['member-us-east-1', 'karmada-es-', '']) {
      const slice = edited(IMPORTED, (m) => {
        m.annotations!['work.karmada.io/namespace'] = annotation;
      });
      expect(nameSlice(slice, karmada)).toEqual({
        kind: 'pool',
        cluster: 'member-us-east-1',
        namespace: 'dynamo',
        service: 'llama-70b-pool-relay',
        role: 'relay',
        name: 'llama-70b',
        key: 'member-us-east-1/dynamo/llama-70b',
        warning: 'annotation work.karmada.io/namespace missing or not karmada-es-<cluster>; using the cluster in the slice name',
      });
    }
  });

  it('control plane: the annotation with a matching name gives no warning', () => {
    const named = nameSlice(fixtureSlice(IMPORTED), karmada);
    expect(named).toEqual({
      kind: 'pool',
      cluster: 'member-us-east-1',
      namespace: 'dynamo',
      service: 'llama-70b-pool-relay',
      role: 'relay',
      name: 'llama-70b',
      key: 'member-us-east-1/dynamo/llama-70b',
    });
  });

  it('control plane: the annotation wins over a name of another cluster, and the warning says so', () => {
    const slice = edited(IMPORTED, (m) => {
      m.name = 'imported-member-eu-west-2-llama-70b-pool-relay-x7k2q';
    });
    expect(nameSlice(slice, karmada)).toMatchObject({
      kind: 'pool',
      key: 'member-us-east-1/dynamo/llama-70b',
      warning: 'slice name does not start with imported-member-us-east-1-; using the cluster of annotation work.karmada.io/namespace',
    });
  });

  it('control plane: neither a usable annotation nor an imported- name, with a warning', () => {
    const slice = edited(IMPORTED, (m) => {
      delete m.annotations!['work.karmada.io/namespace'];
      m.name = 'llama-70b-pool-relay-x7k2q';
    });
    expect(nameSlice(slice, karmada)).toEqual({
      kind: 'skip',
      reason: 'Karmada-imported slice without a usable work.karmada.io/namespace annotation or imported-<cluster>- name',
      warn: true,
    });
  });

  it('control plane: the annotation names the cluster, but a derived service of neither suffix is skipped', () => {
    const slice = edited(IMPORTED, (m) => {
      m.labels!['kubernetes.io/service-name'] = 'derived-llama-70b-metrics';
    });
    expect(nameSlice(slice, karmada)).toMatchObject({ kind: 'skip', warn: false });
  });

  it('MultiClusterService flow: no service-name label, with a warning', () => {
    const slice = edited(DISPATCHED, (m) => {
      delete m.labels!['kubernetes.io/service-name'];
    });
    expect(nameSlice(slice, karmada)).toEqual({
      kind: 'skip',
      reason: 'Karmada-dispatched slice without a kubernetes.io/service-name label',
      warn: true,
    });
  });

  it('MultiClusterService flow: a service matching neither suffix, silently', () => {
    const slice = edited(DISPATCHED, (m) => {
      m.labels!['kubernetes.io/service-name'] = 'global-router';
    });
    expect(nameSlice(slice, karmada)).toEqual({ kind: 'skip', reason: 'service global-router matches neither suffix', warn: false });
  });

  it('MultiClusterService flow: the annotation with a matching name gives no warning; another name warns', () => {
    expect(nameSlice(fixtureSlice(DISPATCHED), karmada)).toEqual({
      kind: 'pool',
      cluster: 'member-us-east-1',
      namespace: 'dynamo',
      service: 'llama-70b-frontend',
      role: 'frontend',
      name: 'llama-70b',
      key: 'member-us-east-1/dynamo/llama-70b',
    });
    const renamed = edited(DISPATCHED, (m) => {
      m.name = 'member-us-east-12-llama-70b-frontend-4kz9w';
      m.annotations!['endpointslice.karmada.io/provision-cluster'] = 'member-us-east-1';
    });
    // `member-us-east-12-…` starts with `member-us-east-1` but not with `member-us-east-1-`.
    expect(nameSlice(renamed, karmada)).toMatchObject({
      key: 'member-us-east-1/dynamo/llama-70b',
      warning: 'slice name does not start with member-us-east-1-; using annotation endpointslice.karmada.io/provision-cluster',
    });
  });

  it('MultiClusterService flow without the annotation: a name that does not fit, with a warning', () => {
    const slice = edited(DISPATCHED, (m) => {
      delete m.annotations!['endpointslice.karmada.io/provision-cluster'];
      m.name = 'llama-70b-frontend-manual';
    });
    expect(nameSlice(slice, karmada)).toEqual({
      kind: 'skip',
      reason: 'Karmada-dispatched slice without endpointslice.karmada.io/provision-cluster whose name does not read <cluster>-llama-70b-frontend-xxxxx',
      warn: true,
    });
  });
});
