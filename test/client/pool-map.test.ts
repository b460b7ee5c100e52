// The caller merge rule (docs/contract.md §5) as PoolMap applies it, one edge case a test.
import { describe, expect, it } from 'vitest';
import { droppedEverywhere, PoolMap, samePool } from '../../src/client/pool-map.js';
import type { ListedPool } from '../../src/contract/index.js';

function pool(name: string, overrides: Partial<ListedPool> = {}): ListedPool {
  return {
    cluster_id: 'c1',
    namespace: 'llm',
    name,
    model: 'm1',
    capabilities: [],
    capacity: [{ name: 'gpus', value: 8 }],
    location: {},
    relays: [],
    frontends: ['http://127.0.0.1:8000'],
    state: 'live',
    ...overrides,
  };
}

const list = (complete: boolean, pools: ListedPool[]) => ({ complete, revision: '1', pools });

describe('PoolMap', () => {
  it('adds every pool of a first list, complete or not', () => {
    const map = new PoolMap();
    expect(map.applyList(list(false, [pool('a'), pool('b')])).map((c) => [c.type, c.key])).toEqual([
      ['added', 'c1/llm/a'],
      ['added', 'c1/llm/b'],
    ]);
    expect([...map.view.keys()]).toEqual(['c1/llm/a', 'c1/llm/b']);
  });

  it('keeps pools an incomplete list does not name', () => {
    const map = new PoolMap();
    map.applyList(list(true, [pool('a'), pool('b')]));
    expect(map.applyList(list(false, [pool('a')]))).toEqual([]);
    expect(map.get('c1/llm/b')).toBeDefined();
  });

  it('removes pools only a complete list leaves out', () => {
    const map = new PoolMap();
    map.applyList(list(true, [pool('a'), pool('b')]));
    const changes = map.applyList(list(true, [pool('a')]));
    expect(changes).toEqual([{ type: 'removed', key: 'c1/llm/b', previous: pool('b') }]);
    expect(map.get('c1/llm/b')).toBeUndefined();
  });

  it('updates a pool whose fields changed, in any list or upsert, and reports nothing when they did not', () => {
    const map = new PoolMap();
    map.applyList(list(true, [pool('a')]));
    const changed = pool('a', { state: 'frontendless', frontends: [] });
    expect(map.applyList(list(false, [changed]))).toEqual([{ type: 'updated', key: 'c1/llm/a', pool: changed, previous: pool('a') }]);
    const reordered = Object.fromEntries(Object.entries(changed).reverse()) as ListedPool;
    expect(map.upsert(reordered)).toEqual([]);
  });

  it('removes on a delete event even while incomplete, and ignores a delete of an unknown pool', () => {
    const map = new PoolMap();
    map.applyList(list(false, [pool('a')]));
    expect(map.remove({ cluster_id: 'c1', namespace: 'llm', name: 'a' })).toHaveLength(1);
    expect(map.remove('c1/llm/a')).toEqual([]);
  });

  it('looks pools up by model, following model changes and removals', () => {
    const map = new PoolMap();
    map.applyList(list(true, [pool('b'), pool('a'), pool('c', { model: 'm2' })]));
    expect(map.byModel('m1').map((p) => p.name)).toEqual(['a', 'b']);
    map.upsert(pool('a', { model: 'm2' }));
    expect(map.byModel('m1').map((p) => p.name)).toEqual(['b']);
    expect(map.byModel('m2').map((p) => p.name)).toEqual(['a', 'c']);
    map.applyList(list(true, [pool('b')]));
    expect(map.byModel('m2')).toEqual([]);
    expect(map.byModel('nope')).toEqual([]);
  });
});

describe('samePool', () => {
  it('is field-by-field equality, whatever order the keys came in, and a key set to undefined is a key left out', () => {
    const a = pool('a', { location: { region: 'eu', zone: 'eu-1' } });
    const reordered = { ...Object.fromEntries(Object.entries(a).reverse()), location: { zone: 'eu-1', region: 'eu' } } as ListedPool;
    expect(samePool(a, reordered)).toBe(true);
    expect(samePool(a, { ...a, lease_regions: undefined })).toBe(true);
  });

  it('tells apart a changed value, a changed key, an array order and an array from an object', () => {
    const a = pool('a', { capacity: [{ name: 'gpus', value: 8 }, { name: 'slots', value: 2 }] });
    expect(samePool(a, { ...a, capacity: [...a.capacity].reverse() })).toBe(false);
    expect(samePool(a, { ...a, capacity: [{ name: 'gpus', value: 8 }, { name: 'slots', value: 3 }] })).toBe(false);
    expect(samePool(a, { ...a, location: { region: 'eu' } })).toBe(false);
    expect(samePool(pool('a', { location: { region: 'eu' } }), pool('a', { location: { zone: 'eu' } }))).toBe(false);
    expect(samePool(pool('a', { frontends: ['x'] }), pool('a', { frontends: { 0: 'x' } as unknown as string[] }))).toBe(false);
    expect(samePool(pool('a', { capabilities: ['a,b'] }), pool('a', { capabilities: ['a', 'b'] }))).toBe(false);
  });
});

describe('droppedEverywhere', () => {
  it('is false while a lease region is named but not dropped', () => {
    const p = pool('a', { lease_regions: ['eu'] });
    expect(droppedEverywhere(p, [{ name: 'eu', complete: true, dropped: false }])).toBe(false);
    expect(droppedEverywhere(p, [{ name: 'eu', complete: false, dropped: true }])).toBe(true);
  });
});
