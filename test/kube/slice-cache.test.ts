import { describe, expect, it } from 'vitest';
import { nameSlice } from '../../src/kube/naming.js';
import { changedKeys, SliceCache, type CachedSlice } from '../../src/kube/slice-cache.js';
import type { EndpointSlice } from '../../src/kube/slice.js';
import { DEFAULT_SUFFIXES, fixtureSlice, version } from './helpers.js';

const LLAMA = 'gpu-east-1/dynamo/llama-70b';
const LLAMA_WEST = 'gpu-west-2/dynamo/llama-70b';
const QWEN = 'gpu-v6-1/dynamo/qwen3-32b';

function newCache(): SliceCache {
  return new SliceCache((slice) => {
    const naming = nameSlice(slice, { mode: 'mcs', ...DEFAULT_SUFFIXES });
    return naming.kind === 'pool' ? { key: naming.key, role: naming.role } : undefined;
  });
}

const relay = fixtureSlice('mcs/relay-ready.json');
const frontend = fixtureSlice('mcs/frontend-ipv4.json');
const qwen = fixtureSlice('mcs/frontend-ipv6-only.json');
const setCluster = (cluster: string) => (copy: EndpointSlice) => {
  copy.metadata.labels!['multicluster.kubernetes.io/source-cluster'] = cluster;
};
const setService = (service: string) => (copy: EndpointSlice) => {
  copy.metadata.labels!['multicluster.kubernetes.io/service-name'] = service;
};

describe('SliceCache.apply', () => {
  it('ADDED of a pool slice changes its key', () => {
    const cache = newCache();
    expect(cache.apply({ type: 'ADDED', slice: relay })).toEqual([LLAMA]);
    expect(cache.slicesOf(LLAMA).map((s) => s.role)).toEqual(['relay']);
  });

  it('ADDED of a slice that names no pool changes nothing', () => {
    const cache = newCache();
    expect(cache.apply({ type: 'ADDED', slice: version(relay, '1', setService('global-router')) })).toEqual([]);
    expect(cache.size).toBe(0);
  });

  it('a repeated event at the same resourceVersion changes nothing (re-watch replays)', () => {
    const cache = newCache();
    cache.apply({ type: 'ADDED', slice: relay });
    expect(cache.apply({ type: 'ADDED', slice: relay })).toEqual([]);
    expect(cache.apply({ type: 'MODIFIED', slice: relay })).toEqual([]);
  });

  it('MODIFIED at a new resourceVersion changes the key', () => {
    const cache = newCache();
    cache.apply({ type: 'ADDED', slice: relay });
    expect(cache.apply({ type: 'MODIFIED', slice: version(relay, '99') })).toEqual([LLAMA]);
  });

  it('a slice without resourceVersion always counts as changed', () => {
    const cache = newCache();
    const bare = version(relay, '', (copy) => delete copy.metadata.resourceVersion);
    cache.apply({ type: 'ADDED', slice: bare });
    expect(cache.apply({ type: 'MODIFIED', slice: bare })).toEqual([LLAMA]);
  });

  it('MODIFIED that moves a slice to another pool changes both keys', () => {
    const cache = newCache();
    cache.apply({ type: 'ADDED', slice: relay });
    expect(cache.apply({ type: 'MODIFIED', slice: version(relay, '99', setCluster('gpu-west-2')) })).toEqual([
      LLAMA,
      LLAMA_WEST,
    ]);
    expect(cache.keys()).toEqual([LLAMA_WEST]);
  });

  it('MODIFIED that makes a slice name no pool removes it from its key', () => {
    const cache = newCache();
    cache.apply({ type: 'ADDED', slice: relay });
    expect(cache.apply({ type: 'MODIFIED', slice: version(relay, '99', setService('global-router')) })).toEqual([LLAMA]);
    expect(cache.keys()).toEqual([]);
    expect(cache.slicesOf(LLAMA)).toEqual([]);
  });

  it('MODIFIED of a slice not seen before adds it', () => {
    const cache = newCache();
    expect(cache.apply({ type: 'MODIFIED', slice: relay })).toEqual([LLAMA]);
  });

  it('DELETED removes a known slice and ignores an unknown one', () => {
    const cache = newCache();
    cache.apply({ type: 'ADDED', slice: relay });
    cache.apply({ type: 'ADDED', slice: frontend });
    expect(cache.apply({ type: 'DELETED', slice: qwen })).toEqual([]);
    expect(cache.apply({ type: 'DELETED', slice: frontend })).toEqual([LLAMA]);
    expect(cache.slicesOf(LLAMA).map((s) => s.role)).toEqual(['relay']);
    expect(cache.apply({ type: 'DELETED', slice: relay })).toEqual([LLAMA]);
    expect(cache.keys()).toEqual([]);
  });

  it('DELETED goes by namespace/name, whatever the last state carries', () => {
    const cache = newCache();
    cache.apply({ type: 'ADDED', slice: relay });
    expect(cache.apply({ type: 'DELETED', slice: version(relay, '100', setService('renamed')) })).toEqual([LLAMA]);
    expect(cache.size).toBe(0);
  });
});

describe('SliceCache.relist', () => {
  it('fills an empty cache', () => {
    const cache = newCache();
    expect(cache.relist([relay, frontend, qwen]).sort()).toEqual([LLAMA, QWEN].sort());
    expect(cache.size).toBe(3);
  });

  it('removes what the list omits, keeps what is unchanged, and reports only changed keys', () => {
    const cache = newCache();
    cache.relist([relay, frontend, qwen]);
    expect(cache.relist([relay, frontend])).toEqual([QWEN]);
    expect(cache.keys()).toEqual([LLAMA]);
  });

  it('reports a key whose slice changed resourceVersion or moved', () => {
    const cache = newCache();
    cache.relist([relay, qwen]);
    expect(cache.relist([version(relay, '5'), qwen])).toEqual([LLAMA]);
    expect(cache.relist([version(relay, '6', setCluster('gpu-west-2')), qwen])).toEqual([LLAMA, LLAMA_WEST]);
  });

  it('an empty list empties the cache', () => {
    const cache = newCache();
    cache.relist([relay, qwen]);
    expect(cache.relist([]).sort()).toEqual([LLAMA, QWEN].sort());
    expect(cache.size).toBe(0);
  });
});

describe('changedKeys', () => {
  const entry = (key: string, resourceVersion: string, role: 'relay' | 'frontend' = 'relay'): CachedSlice => ({
    id: 'ns/a',
    key,
    role,
    slice: version(relay, resourceVersion),
  });

  it('covers absent, same, changed, moved and re-roled entries', () => {
    expect(changedKeys(undefined, undefined)).toEqual([]);
    expect(changedKeys(undefined, entry('k', '1'))).toEqual(['k']);
    expect(changedKeys(entry('k', '1'), undefined)).toEqual(['k']);
    expect(changedKeys(entry('k', '1'), entry('k', '1'))).toEqual([]);
    expect(changedKeys(entry('k', '1'), entry('k', '2'))).toEqual(['k']);
    expect(changedKeys(entry('k', '1'), entry('j', '1'))).toEqual(['k', 'j']);
    expect(changedKeys(entry('k', '1', 'relay'), entry('k', '1', 'frontend'))).toEqual(['k']);
  });
});
