// The caller rule converges for a poller while another region is dropped (docs/contract.md §7): replica B
// reads region C through a proxy that holds every byte, so C is held, then dropped, and every list says
// `complete: false` from then on. A pool of region A (healthy, its entry `complete: true`) whose relay stops
// must still leave a polling router's view (GET /pools merged with PoolMap.applyList), as it leaves a
// watching router's (watchPools: a `delete`), and the two views agree.
import { describe, expect, it } from 'vitest';
import { PoolMap, watchPools, type PoolChange } from '../../src/client/index.js';
import type { PoolList } from '../../src/contract/index.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { A, B, entryOf, keepRegistered, listPools, poolOf, regionsFile, useRegions } from './support.js';

const C = 'ap-south-1';
const { servers, track, startReplicas, proxyTo } = useRegions([A, B, C]);

describe('regions: a polling router converges while another region is dropped', () => {
  it("removes a lapsed pool of a complete region from a poller's view, as a watcher does", async () => {
    const proxy = await proxyTo(C);
    const [onA, onB] = await startReplicas(regionsFile(servers), [A, B], { [B]: { [C]: proxy.url } });
    const a1 = track(await keepRegistered(onA.url, poolOf(A, 'a1')));
    track(await keepRegistered(onA.url, poolOf(A, 'a2')));
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));
    await waitFor(async () => (await onB.list()).pools.length === 3, { timeoutMs: 10_000, message: 'three pools on B' });

    const polled = new PoolMap();
    const removals: { change: PoolChange; list: PoolList }[] = [];
    const poller = track(
      repeatEvery(50, async () => {
        const list = await listPools(onB.url);
        for (const change of polled.applyList(list)) if (change.type === 'removed') removals.push({ change, list });
      }),
    );
    const watcher = watchPools({ servers: [onB.url], firstEventTimeoutMs: 2000 });
    track({ stop: () => watcher.close() });
    await watcher.ready;
    await waitFor(() => polled.view.size === 3 && watcher.pools.size === 3, { timeoutMs: 5000, message: 'both views full' });

    // C cannot be read: held, then dropped; every list is incomplete from then on.
    proxy.hold();
    await waitFor(async () => entryOf(await onB.list(), C)?.dropped === true, { timeoutMs: 10_000, message: 'C dropped on B' });

    // a1's relay stops: its lease lapses in A, a complete region.
    await a1.stop();
    await waitFor(() => watcher.pools.size === 2, { timeoutMs: 10_000, message: 'the watcher removing a1' });
    await waitFor(() => removals.length === 1, { timeoutMs: 5000, message: 'the poller removing a1' });
    const [{ change, list }] = removals as [(typeof removals)[number]];
    expect(change.key).toBe(`${A}-c1/llm/a1`);
    expect(list.complete).toBe(false);
    expect(entryOf(list, A)).toMatchObject({ complete: true, dropped: false });
    expect(entryOf(list, C)).toMatchObject({ complete: false, dropped: true });
    expect([...polled.view.keys()].sort()).toEqual([`${A}-c1/llm/a2`, `${B}-c1/llm/b1`]);
    expect([...watcher.pools.keys()].sort()).toEqual([...polled.view.keys()].sort());
    await poller.stop();
    proxy.release();
  });
});
