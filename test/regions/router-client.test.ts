// The router client's merge rule with a dropped region (docs/contract.md §7): a poller, GET /pools on
// replica B again and again merged with PoolMap, removes region A's pools once B's entry for A says
// `dropped: true`, although every such list says `complete: false`; a watcher (watchPools on B's event
// stream) removes them through B's `delete`s; the two views agree, and B's own pools stay in both.
import { describe, expect, it } from 'vitest';
import { PoolMap, watchPools, type PoolChange } from '../../src/client/index.js';
import type { PoolList } from '../../src/contract/index.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { A, B, entryOf, keepRegistered, listPools, poolOf, regionsFile, useRegions } from './support.js';

const { servers, track, startReplicas, proxyTo } = useRegions([A, B]);

describe('regions: the router client with a dropped region', () => {
  it("removes A's pools from a poller's view once A is dropped, though the list is incomplete, as a watcher does", async () => {
    const proxy = await proxyTo(A);
    const [onA, onB] = await startReplicas(regionsFile(servers), [A, B], { [B]: { [A]: proxy.url } });
    for (const name of ['a1', 'a2']) track(await keepRegistered(onA.url, poolOf(A, name)));
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));
    await waitFor(async () => (await onB.list()).pools.length === 3, { timeoutMs: 10_000, message: 'three pools on B' });

    // The poller: every list merged under the caller rule; each change noted with the list that made it.
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

    proxy.hold();
    await waitFor(() => removals.length === 2, { timeoutMs: 10_000, message: "the poller removing A's pools" });
    for (const { change, list } of removals) {
      expect(change.key.startsWith(`${A}-c1/`)).toBe(true);
      // Removed on an incomplete list, because its only lease region is dropped in it.
      expect(list.complete).toBe(false);
      expect(entryOf(list, A)).toMatchObject({ complete: false, dropped: true });
    }
    expect([...polled.view.keys()]).toEqual([`${B}-c1/llm/b1`]);

    // The watcher agrees (it got a delete per pool), and is told the list is incomplete.
    await waitFor(() => watcher.pools.size === 1, { timeoutMs: 5000, message: "the watcher dropping A's pools" });
    expect([...watcher.pools.keys()]).toEqual([...polled.view.keys()]);
    expect(watcher.status.complete).toBe(false);
    expect(watcher.status.regions?.find((r) => r.name === A)).toMatchObject({ dropped: true });
    await poller.stop();
    proxy.release();
  });
});
