// The caller merge rule (docs/contract.md §5, §10) as RouterMap applies it to routers keyed by id, one
// edge case a test: an incomplete list keeps routers it does not name, a complete one (or a router's
// every lease region dropped) removes them, and a router listed again unchanged is no change.
import { describe, expect, it } from 'vitest';
import { RouterMap } from '../../src/client/router-map.js';
import type { ListedRouter, RegionStatus } from '../../src/contract/index.js';

function router(id: string, overrides: Partial<ListedRouter> = {}): ListedRouter {
  return { id, url: `http://10.0.1.1:9100/${id}`, source: 'registration', ...overrides };
}

const region = (name: string, dropped: boolean): RegionStatus => ({ name, complete: !dropped, dropped });
const summary = (changes: { type: string; id: string }[]) => changes.map((change) => [change.type, change.id]);

describe('RouterMap', () => {
  it('adds every router of a first list, complete or not, and lists them in its view', () => {
    const map = new RouterMap();
    expect(summary(map.applyList({ complete: false, routers: [router('gr-a'), router('gr-b')] }))).toEqual([
      ['added', 'gr-a'],
      ['added', 'gr-b'],
    ]);
    expect([...map.view.keys()]).toEqual(['gr-a', 'gr-b']);
    expect(map.view.get('gr-a')).toEqual(router('gr-a'));
  });

  it('an incomplete list keeps the routers it does not name; a complete one removes them', () => {
    const map = new RouterMap();
    map.applyList({ complete: true, routers: [router('gr-a'), router('gr-b')] });
    expect(map.applyList({ complete: false, routers: [router('gr-a')] })).toEqual([]);
    expect([...map.view.keys()]).toEqual(['gr-a', 'gr-b']);
    expect(map.applyList({ complete: true, routers: [router('gr-a')] })).toEqual([{ type: 'removed', id: 'gr-b', previous: router('gr-b') }]);
    expect([...map.view.keys()]).toEqual(['gr-a']);
  });

  it('a router listed again with its keys in another order is no change; a changed field is an update naming the previous', () => {
    const map = new RouterMap();
    map.applyList({ complete: true, routers: [router('gr-a', { zone: 'z-1' })] });
    const reordered = { zone: 'z-1', source: 'registration', url: 'http://10.0.1.1:9100/gr-a', id: 'gr-a' } as ListedRouter;
    expect(map.upsert(reordered)).toEqual([]);
    const moved = router('gr-a', { zone: 'z-2' });
    expect(map.applyList({ complete: true, routers: [moved] })).toEqual([{ type: 'updated', id: 'gr-a', router: moved, previous: router('gr-a', { zone: 'z-1' }) }]);
    expect(map.view.get('gr-a')).toBe(moved);
  });

  it('removes a router by id once; an unknown id is no change', () => {
    const map = new RouterMap();
    map.upsert(router('gr-a'));
    expect(map.remove('gr-x')).toEqual([]);
    expect(map.remove('gr-a')).toEqual([{ type: 'removed', id: 'gr-a', previous: router('gr-a') }]);
    expect(map.remove('gr-a')).toEqual([]);
    expect(map.view.size).toBe(0);
  });

  describe('with regions, an incomplete list', () => {
    const twoRegions = router('gr-two', { lease_regions: ['eu', 'us'] });
    const noRegions = router('gr-none');
    const emptyRegions = router('gr-empty', { lease_regions: [] });
    const start = () => {
      const map = new RouterMap();
      map.applyList({ complete: true, routers: [twoRegions, noRegions, emptyRegions] });
      return map;
    };

    it('removes a router whose every lease region is dropped, and keeps those without lease regions', () => {
      const map = start();
      const changes = map.applyList({ complete: false, routers: [], regions: [region('eu', true), region('us', true)] });
      expect(summary(changes)).toEqual([['removed', 'gr-two']]);
      expect([...map.view.keys()]).toEqual(['gr-none', 'gr-empty']);
    });

    it('keeps a router with one of its two lease regions dropped', () => {
      const map = start();
      expect(map.applyList({ complete: false, routers: [], regions: [region('eu', true), region('us', false)] })).toEqual([]);
      expect(map.view.has('gr-two')).toBe(true);
    });

    it('keeps every router when the list names no regions', () => {
      const map = start();
      expect(map.applyList({ complete: false, routers: [] })).toEqual([]);
      expect(map.view.size).toBe(3);
    });

    it('keeps a router its list names, even with its regions dropped', () => {
      const map = start();
      expect(map.applyList({ complete: false, routers: [twoRegions], regions: [region('eu', true), region('us', true)] })).toEqual([]);
      expect(map.view.has('gr-two')).toBe(true);
    });
  });
});
