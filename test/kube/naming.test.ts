import { describe, expect, it } from 'vitest';
import { clusterFromGeneratedName, nameSlice, type NamingOptions, type SliceNaming } from '../../src/kube/naming.js';
import { parseEndpointSlice, type EndpointSlice } from '../../src/kube/slice.js';
import { DEFAULT_SUFFIXES, fixtureSlice, fixtureText } from './helpers.js';

const mcs: NamingOptions = { mode: 'mcs', ...DEFAULT_SUFFIXES };
const karmada: NamingOptions = { mode: 'karmada', ...DEFAULT_SUFFIXES };

function pool(naming: SliceNaming): { key: string; role: string; service: string; warning?: string } {
  if (naming.kind !== 'pool') throw new Error(`skipped: ${naming.reason}`);
  return { key: naming.key, role: naming.role, service: naming.service, ...(naming.warning ? { warning: naming.warning } : {}) };
}

function listItems(path: string): EndpointSlice[] {
  const list = JSON.parse(fixtureText(path)) as { items: unknown[] };
  return list.items.map((item) => {
    const parsed = parseEndpointSlice(item);
    if ('error' in parsed) throw new Error(parsed.error);
    return parsed.slice;
  });
}

function withMetadata(slice: EndpointSlice, change: (metadata: EndpointSlice['metadata']) => void): EndpointSlice {
  const copy = structuredClone(slice);
  change(copy.metadata);
  return copy;
}

describe('mcs naming (KEP-1645 labels)', () => {
  it.each([
    ['relay-ready', 'gpu-east-1/dynamo/llama-70b', 'relay'],
    ['frontend-ipv4', 'gpu-east-1/dynamo/llama-70b', 'frontend'],
    ['frontend-ipv6-dualstack', 'gpu-east-1/dynamo/llama-70b', 'frontend'],
    ['frontend-ipv6-only', 'gpu-v6-1/dynamo/qwen3-32b', 'frontend'],
    ['frontend-other-port-name', 'gpu-east-1/dynamo/mistral-7b', 'frontend'],
    ['endpoint-not-ready', 'gpu-east-1/dynamo/gemma-27b', 'relay'],
    ['endpoint-ready-absent', 'gpu-east-1/dynamo/gemma-27b', 'frontend'],
    ['relay-second-cluster', 'gpu-west-2/dynamo/llama-70b', 'relay'],
  ])('mcs/%s.json → %s (%s)', (file, key, role) => {
    expect(pool(nameSlice(fixtureSlice(`mcs/${file}.json`), mcs))).toMatchObject({ key, role });
  });

  it('skips the native slice and the Lighthouse broker copy of mcs/list.json, silently', () => {
    const skipped = listItems('mcs/list.json')
      .map((slice) => ({ slice, naming: nameSlice(slice, mcs) }))
      .filter(({ naming }) => naming.kind === 'skip');
    expect(skipped.map(({ slice }) => `${slice.metadata.namespace}/${slice.metadata.name}`)).toEqual([
      'dynamo/llama-70b-pool-relay-j6rfx',
      'submariner-k8s-broker/llama-70b-pool-relay-kq7wz',
    ]);
    expect(skipped.every(({ naming }) => naming.kind === 'skip' && !naming.warn)).toBe(true);
  });

  it('takes source-cluster verbatim (dots and dashes) and lets the KEP label win over submariner-io/clusterID', () => {
    const slice = withMetadata(fixtureSlice('mcs/relay-ready.json'), (m) => {
      m.labels!['multicluster.kubernetes.io/source-cluster'] = 'gpu-east-1.clusterset-a';
      m.labels!['submariner-io/clusterID'] = 'something-else';
    });
    expect(pool(nameSlice(slice, mcs)).key).toBe('gpu-east-1.clusterset-a/dynamo/llama-70b');
  });

  it('needs both labels non-empty and never reads the slice name', () => {
    const noCluster = withMetadata(fixtureSlice('mcs/relay-ready.json'), (m) => {
      m.labels!['multicluster.kubernetes.io/source-cluster'] = '';
    });
    expect(nameSlice(noCluster, mcs)).toMatchObject({ kind: 'skip', warn: false });
    const renamed = withMetadata(fixtureSlice('mcs/relay-ready.json'), (m) => {
      m.name = 'imported-llama-70b-pool-relay-other-cluster-1';
    });
    expect(pool(nameSlice(renamed, mcs)).key).toBe('gpu-east-1/dynamo/llama-70b');
  });

  it('ignores services matching neither suffix, and honours custom suffixes', () => {
    const router = withMetadata(fixtureSlice('mcs/relay-ready.json'), (m) => {
      m.labels!['multicluster.kubernetes.io/service-name'] = 'global-router';
    });
    expect(nameSlice(router, mcs)).toMatchObject({ kind: 'skip', warn: false });
    const custom = withMetadata(fixtureSlice('mcs/relay-ready.json'), (m) => {
      m.labels!['multicluster.kubernetes.io/service-name'] = 'llama-70b-relay';
    });
    const options: NamingOptions = { mode: 'mcs', relayServiceSuffix: '-relay', frontendServiceSuffix: '-fe' };
    expect(pool(nameSlice(custom, options))).toMatchObject({ key: 'gpu-east-1/dynamo/llama-70b', role: 'relay' });
  });

  it('does not read Karmada slices', () => {
    expect(nameSlice(fixtureSlice('karmada/cp-relay-ready.json'), mcs).kind).toBe('skip');
  });
});

describe('karmada naming', () => {
  it.each([
    ['cp-relay-ready', 'member-us-east-1/dynamo/llama-70b', 'relay'],
    ['cp-frontend-ipv4', 'member-us-east-1/dynamo/llama-70b', 'frontend'],
    ['cp-frontend-ipv6-dualstack', 'member-us-east-1/dynamo/llama-70b', 'frontend'],
    ['cp-frontend-ipv6-only', 'member-ipv6-1/dynamo/qwen3-32b', 'frontend'],
    ['cp-frontend-other-port-name', 'member-us-east-1/dynamo/mistral-7b', 'frontend'],
    ['cp-endpoint-not-ready', 'member-us-east-1/dynamo/gemma-27b', 'relay'],
    ['cp-endpoint-ready-absent', 'member-us-east-1/dynamo/gemma-27b', 'frontend'],
    ['cp-relay-second-cluster', 'member-eu-west-2/dynamo/llama-70b', 'relay'],
    ['member-serviceimport-copy', 'member-us-east-1/dynamo/llama-70b', 'relay'],
    ['member-multiclusterservice-dispatch', 'member-us-east-1/dynamo/llama-70b', 'frontend'],
  ])('karmada/%s.json → %s (%s), without a warning', (file, key, role) => {
    const named = pool(nameSlice(fixtureSlice(`karmada/${file}.json`), karmada));
    expect(named).toMatchObject({ key, role });
    expect(named.warning).toBeUndefined();
  });

  it('ignores derived-global-router in karmada/list.json (no suffix) and names every other item', () => {
    const skipped = listItems('karmada/list.json').filter((slice) => nameSlice(slice, karmada).kind === 'skip');
    expect(skipped.map((slice) => slice.metadata.name)).toEqual(['imported-member-us-east-1-global-router-v2bq8']);
    expect(nameSlice(skipped[0]!, karmada)).toMatchObject({ kind: 'skip', warn: false });
  });

  it('control plane: the work.karmada.io/namespace annotation wins over the name, with a warning', () => {
    const slice = withMetadata(fixtureSlice('karmada/cp-relay-ready.json'), (m) => {
      m.name = 'imported-member-eu-west-2-llama-70b-pool-relay-x7k2q';
    });
    const named = pool(nameSlice(slice, karmada));
    expect(named.key).toBe('member-us-east-1/dynamo/llama-70b');
    expect(named.warning).toMatch(/imported-member-us-east-1-/);
  });

  it('control plane without the annotation: the cluster comes from the name, with a warning', () => {
    const slice = withMetadata(fixtureSlice('karmada/cp-relay-second-cluster.json'), (m) => {
      delete m.annotations!['work.karmada.io/namespace'];
    });
    const named = pool(nameSlice(slice, karmada));
    expect(named.key).toBe('member-eu-west-2/dynamo/llama-70b');
    expect(named.warning).toBeDefined();
  });

  it('member copy: ignores the annotation (it names this cluster) and reads the cluster from the name', () => {
    const slice = fixtureSlice('karmada/member-serviceimport-copy.json');
    expect(slice.metadata.annotations?.['work.karmada.io/namespace']).toBe('karmada-es-member-eu-west-2');
    expect(pool(nameSlice(slice, karmada)).key).toBe('member-us-east-1/dynamo/llama-70b');
  });

  it('member copy whose name does not fit the generateName tail: skipped with a warning', () => {
    // The hand-made `…-manual` source slice was not generateName'd.
    const slice = withMetadata(fixtureSlice('karmada/cp-endpoint-ready-absent.json'), (m) => {
      m.labels!['karmada.io/managed'] = 'true';
    });
    expect(nameSlice(slice, karmada)).toMatchObject({ kind: 'skip', warn: true });
  });

  it('member copy: cluster names with dashes, even ones that look like the service, are read whole', () => {
    const slice = (name: string) =>
      withMetadata(fixtureSlice('karmada/member-serviceimport-copy.json'), (m) => {
        m.name = name;
      });
    expect(pool(nameSlice(slice('imported-a-b-c-llama-70b-pool-relay-x7k2q'), karmada)).key).toBe(
      'a-b-c/dynamo/llama-70b',
    );
    expect(pool(nameSlice(slice('imported-east-llama-70b-pool-relay-llama-70b-pool-relay-x7k2q'), karmada)).key).toBe(
      'east-llama-70b-pool-relay/dynamo/llama-70b',
    );
  });

  it('requires the derived- prefix in the ServiceImport flow', () => {
    const slice = withMetadata(fixtureSlice('karmada/cp-relay-ready.json'), (m) => {
      m.labels!['kubernetes.io/service-name'] = 'llama-70b-pool-relay';
    });
    expect(nameSlice(slice, karmada)).toMatchObject({ kind: 'skip', warn: true });
  });

  it('MultiClusterService flow: the provision-cluster annotation wins over the name prefix, with a warning', () => {
    const slice = withMetadata(fixtureSlice('karmada/member-multiclusterservice-dispatch.json'), (m) => {
      m.annotations!['endpointslice.karmada.io/provision-cluster'] = 'member-ap-south-1';
    });
    const named = pool(nameSlice(slice, karmada));
    expect(named.key).toBe('member-ap-south-1/dynamo/llama-70b');
    expect(named.warning).toMatch(/member-ap-south-1-/);
  });

  it('MultiClusterService flow without the annotation: the name prefix before the generated tail', () => {
    const slice = withMetadata(fixtureSlice('karmada/member-multiclusterservice-dispatch.json'), (m) => {
      delete m.annotations!['endpointslice.karmada.io/provision-cluster'];
    });
    expect(pool(nameSlice(slice, karmada)).key).toBe('member-us-east-1/dynamo/llama-70b');
    const unfit = withMetadata(slice, (m) => {
      m.name = 'member-us-east-1-llama-70b-frontend-manual';
    });
    expect(nameSlice(unfit, karmada)).toMatchObject({ kind: 'skip', warn: true });
  });

  it('ignores native slices and other managers', () => {
    const native = listItems('mcs/list.json').find((s) => s.metadata.name === 'llama-70b-pool-relay-j6rfx')!;
    expect(nameSlice(native, karmada)).toMatchObject({ kind: 'skip', warn: false });
    expect(nameSlice(fixtureSlice('mcs/relay-ready.json'), karmada)).toMatchObject({ kind: 'skip', warn: false });
  });
});

describe('clusterFromGeneratedName', () => {
  it('cuts the generateName base at 58 characters, as the API server does', () => {
    const service = `${'a'.repeat(49)}-pool-relay`; // 60 characters
    const generated = `${`${service}-`.slice(0, 58)}b7k2q`;
    expect(clusterFromGeneratedName(`imported-c-1-${generated}`, 'imported-', service)).toBe('c-1');
    expect(clusterFromGeneratedName(`imported-c-1-${service}-b7k2q`, 'imported-', service)).toBeUndefined();
  });

  it('rejects characters generateName never uses and an empty cluster', () => {
    expect(clusterFromGeneratedName('imported-c-svc-aeiou', 'imported-', 'svc')).toBeUndefined();
    expect(clusterFromGeneratedName('imported--svc-b7k2q', 'imported-', 'svc')).toBeUndefined();
    expect(clusterFromGeneratedName('other-c-svc-b7k2q', 'imported-', 'svc')).toBeUndefined();
  });
});
