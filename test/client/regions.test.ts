// The caller rule extended with regions (docs/contract.md §7): a list also removes a known pool it does not
// name when every region of the pool's `lease_regions` is `complete` or `dropped` in it, even with
// `complete: false` (another region held or dropped), so
// a poller's view agrees with a watcher's (which gets `delete`s). A pool with one of two regions dropped
// stays; without regions nothing changes. PoolMap first, then watchPools() following a stream and polling.
import { afterEach, describe, expect, it } from 'vitest';
import { droppedEverywhere, PoolMap, settledEverywhere, watchPools, type PoolChange, type PoolWatch } from '../../src/client/index.js';
import type { PoolList } from '../../src/contract/index.js';
import { waitFor } from '../support/wait.js';
import { region, regionPool, startRegionsServer, type RegionsServer } from './regions-support.js';

// a: only in eu-west-1; b: in both; c: only in us-east-1.
const A = regionPool('a', ['eu-west-1']);
const B = regionPool('b', ['eu-west-1', 'us-east-1']);
const C = regionPool('c', ['us-east-1']);

const ALL_UP: PoolList = { complete: true, revision: '1', pools: [A, B, C], regions: [region('eu-west-1', 'ok'), region('us-east-1', 'ok')] };
/** eu-west-1 dropped (its pools left the replica's view), us-east-1 held: incomplete, b not named. */
const EU_DROPPED: PoolList = {
  complete: false,
  revision: '2',
  pools: [C],
  regions: [region('eu-west-1', 'dropped'), region('us-east-1', 'held')],
};

const keys = (changes: PoolChange[]) => changes.map((c) => [c.type, c.key]);

describe('PoolMap with regions', () => {
  it('removes a pool whose every lease region is dropped, though the list is incomplete', () => {
    const map = new PoolMap();
    map.applyList(ALL_UP);
    expect(keys(map.applyList(EU_DROPPED))).toEqual([['removed', 'c1/llm/a']]);
    expect([...map.view.keys()].sort()).toEqual(['c1/llm/b', 'c1/llm/c']);
  });

  it('keeps a pool with one of its two regions dropped, and every pool of a held region', () => {
    const map = new PoolMap();
    map.applyList(ALL_UP);
    const held: PoolList = { complete: false, revision: '2', pools: [], regions: [region('eu-west-1', 'held'), region('us-east-1', 'dropped')] };
    expect(keys(map.applyList(held))).toEqual([['removed', 'c1/llm/c']]);
    expect(map.get('c1/llm/b')).toEqual(B);
    expect(map.get('c1/llm/a')).toEqual(A);
  });

  it('keeps a pool the list names, whatever its regions say', () => {
    const map = new PoolMap();
    map.applyList(ALL_UP);
    const odd: PoolList = { ...EU_DROPPED, pools: [A, C] };
    expect(map.applyList(odd)).toEqual([]);
    expect(map.view.size).toBe(3);
  });

  it('changes nothing without regions: pools without lease_regions, or a list without regions', () => {
    const map = new PoolMap();
    const plain = regionPool('plain', undefined);
    map.applyList({ complete: true, revision: '1', pools: [plain, A] });
    // A list without `regions` (a service without regions): the §5 rule alone.
    expect(map.applyList({ complete: false, revision: '2', pools: [] })).toEqual([]);
    // A pool without lease_regions is never removed by the extended rule.
    expect(keys(map.applyList({ ...EU_DROPPED, pools: [] }))).toEqual([['removed', 'c1/llm/a']]);
    expect(map.get('c1/llm/plain')).toEqual(plain);
    // A complete list still removes what it does not name.
    expect(keys(map.applyList({ complete: true, revision: '3', pools: [] }))).toEqual([['removed', 'c1/llm/plain']]);
  });

  it('droppedEverywhere: a region the list does not name is not dropped; an empty lease_regions never is', () => {
    const regions = [region('eu-west-1', 'dropped')];
    expect(droppedEverywhere(A, regions)).toBe(true);
    expect(droppedEverywhere(B, regions)).toBe(false);
    expect(droppedEverywhere(regionPool('none', []), regions)).toBe(false);
    expect(droppedEverywhere(A, undefined)).toBe(false);
  });

  it('removes a pool whose lease regions are all complete or dropped while another region is dropped', () => {
    const map = new PoolMap();
    map.applyList(ALL_UP);
    // us-east-1 read in full, eu-west-1 dropped: incomplete, yet c (us only) and b (both) are settled.
    const settled: PoolList = { complete: false, revision: '2', pools: [], regions: [region('eu-west-1', 'dropped'), region('us-east-1', 'ok')] };
    expect(keys(map.applyList(settled)).sort()).toEqual([['removed', 'c1/llm/a'], ['removed', 'c1/llm/b'], ['removed', 'c1/llm/c']]);
    // A region held (unread, not dropped) settles nothing of its pools.
    map.applyList(ALL_UP);
    const held: PoolList = { complete: false, revision: '3', pools: [], regions: [region('eu-west-1', 'held'), region('us-east-1', 'ok')] };
    expect(keys(map.applyList(held))).toEqual([['removed', 'c1/llm/c']]);
  });

  it('settledEverywhere: complete or dropped settles; held, unnamed or no lease regions never do', () => {
    const regions = [region('eu-west-1', 'ok'), region('us-east-1', 'held')];
    expect(settledEverywhere(A, regions)).toBe(true);
    expect(settledEverywhere(B, regions)).toBe(false);
    expect(settledEverywhere(C, regions)).toBe(false);
    expect(settledEverywhere(C, [region('eu-west-1', 'ok')])).toBe(false);
    expect(settledEverywhere(regionPool('none', []), regions)).toBe(false);
    expect(settledEverywhere(A, undefined)).toBe(false);
  });
});

describe.each([
  { mode: 'sse' as const, who: 'a watcher (resync events)', transport: 'sse' },
  { mode: 'poll' as const, who: 'a poller (GET /pools)', transport: 'polling' },
])('watchPools with regions, as $who', ({ mode, transport }) => {
  const running: RegionsServer[] = [];
  const watches: PoolWatch[] = [];
  afterEach(async () => {
    await Promise.all(watches.splice(0).map((w) => w.close()));
    await Promise.all(running.splice(0).map((s) => s.stop()));
  });

  async function follow(initial: PoolList) {
    const server = await startRegionsServer(initial, mode);
    running.push(server);
    const watch = watchPools({ servers: [server.url], pollIntervalMs: 50, firstEventTimeoutMs: 500 });
    watches.push(watch);
    const changes: PoolChange[] = [];
    watch.onChange((change) => changes.push(change));
    await watch.ready;
    await waitFor(() => watch.status.transport === transport);
    return { server, watch, changes };
  }

  it('removes a pool whose every lease region is dropped, even with complete: false, and keeps the rest', async () => {
    const { server, watch, changes } = await follow(ALL_UP);
    expect(watch.pools.size).toBe(3);
    expect(watch.status.regions).toEqual(ALL_UP.regions);

    server.publish(EU_DROPPED);
    await waitFor(() => watch.status.revision === '2');
    expect([...watch.pools.keys()].sort()).toEqual(['c1/llm/b', 'c1/llm/c']);
    expect(changes.filter((c) => c.type === 'removed').map((c) => c.key)).toEqual(['c1/llm/a']);
    expect(watch.status).toMatchObject({ complete: false, regions: EU_DROPPED.regions });

    // The region is read again: its pools come back with the next list.
    server.publish({ ...ALL_UP, revision: '3' });
    await waitFor(() => watch.pools.size === 3);
    expect(watch.status).toMatchObject({ complete: true, regions: ALL_UP.regions });
  });

  it('keeps a pool with one of two regions dropped', async () => {
    const { server, watch, changes } = await follow(ALL_UP);
    server.publish({ complete: false, revision: '2', pools: [], regions: [region('eu-west-1', 'dropped'), region('us-east-1', 'held')] });
    await waitFor(() => watch.status.revision === '2');
    expect(watch.get('c1/llm/b')).toEqual(B);
    expect(watch.get('c1/llm/c')).toEqual(C);
    expect(changes.filter((c) => c.type === 'removed').map((c) => c.key)).toEqual(['c1/llm/a']);
  });

  it('changes nothing without regions: an incomplete list keeps every pool', async () => {
    const plain = [regionPool('x', undefined), regionPool('y', undefined)];
    const { server, watch, changes } = await follow({ complete: true, revision: '1', pools: plain });
    expect(watch.status.regions).toBeUndefined();
    server.publish({ complete: false, revision: '2', pools: [] });
    await waitFor(() => watch.status.revision === '2');
    expect(watch.pools.size).toBe(2);
    expect(changes.map((c) => c.type)).toEqual(['added', 'added']);
  });
});
