// Routers across regions (docs/contract.md §7, §10): two regions, each with its own redis-server and a
// replica. A router registered in each region is listed by both replicas with its lease_regions (the
// union), written to its home region's Redis only; when B's path to A's Redis holds every byte, B keeps A's
// router for the hold (A's entry incomplete), then drops it with a `delete` on /routers/watch (entry
// dropped), never touching B's own; once the path returns, A's router is back.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { routerListSchema, type RouterList } from '../../src/contract/index.js';
import { SseReader } from '../support/sse.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { A, B, HOLD_MS, regionsFile, useRegions } from '../regions/support.js';
import { postRouter } from './support.js';

const { servers, track, startReplicas, proxyTo } = useRegions([A, B]);

async function routersOf(url: string): Promise<RouterList> {
  return routerListSchema.parse(await (await fetch(`${url}/routers`)).json());
}

describe('routers across two regions', () => {
  it('lists the union with lease_regions, holds a region that cannot be read, then drops its routers, and lists them again once it can', async () => {
    const file = regionsFile(servers);
    const proxy = await proxyTo(A);
    const [onA, onB] = await startReplicas(file, [A, B], { [B]: { [A]: proxy.url } });
    const beats = [
      repeatEvery(300, () => postRouter(onA.url, { id: 'gr-a', url: 'http://10.1.0.1:9100', region: A })),
      repeatEvery(300, () => postRouter(onB.url, { id: 'gr-b', url: 'http://10.2.0.1:9100', region: B })),
    ];
    track({ stop: () => Promise.all(beats.map((b) => b.stop())) });
    for (const replica of [onA, onB]) {
      const list = await waitFor(async () => {
        const body = await routersOf(replica.url);
        return body.complete && body.routers.length === 2 && body;
      }, { timeoutMs: 10_000, message: `both routers on ${replica.region}` });
      expect(list.routers.map((r) => [r.id, r.lease_regions])).toEqual([
        ['gr-a', [A]],
        ['gr-b', [B]],
      ]);
      expect(list.regions?.map((r) => [r.name, r.complete, r.dropped])).toEqual([
        [A, true, false],
        [B, true, false],
      ]);
    }
    // Each written to its home region's Redis only.
    const redisOf = (region: string) => new Redis(file.find((r) => r.name === region)!.redisUrl);
    const [ra, rb] = [redisOf(A), redisOf(B)];
    try {
      const prefixOf = (region: string) => file.find((r) => r.name === region)!.prefix;
      expect(await ra.zrange(`{${prefixOf(A)}}:router-deadlines`, '0', '-1')).toEqual(['gr-a']);
      expect(await rb.zrange(`{${prefixOf(B)}}:router-deadlines`, '0', '-1')).toEqual(['gr-b']);
    } finally {
      ra.disconnect();
      rb.disconnect();
    }

    const watch = await SseReader.open(`${onB.url}/routers/watch`);
    track({ stop: () => watch.close() });
    await waitFor(() => watch.of('resync').length === 1);
    proxy.hold();
    const held = await waitFor(async () => {
      const body = await routersOf(onB.url);
      return body.regions?.find((r) => r.name === A)?.complete === false && body;
    }, { timeoutMs: 5000, message: "B's entry for A incomplete" });
    // Held: A's router still listed, nothing of B touched.
    expect(held.routers.map((r) => r.id)).toEqual(['gr-a', 'gr-b']);
    // Then dropped: a delete for gr-a, the entry says dropped, gr-b stays.
    const dropped = await waitFor(async () => {
      const body = await routersOf(onB.url);
      return body.regions?.find((r) => r.name === A)?.dropped === true && body;
    }, { timeoutMs: HOLD_MS + 3000, message: "B's entry for A dropped" });
    expect(dropped.routers.map((r) => r.id)).toEqual(['gr-b']);
    expect(watch.of('delete').map((m) => (m.data as { router: { id: string } }).router.id)).toEqual(['gr-a']);
    proxy.release();
    await waitFor(async () => (await routersOf(onB.url)).routers.some((r) => r.id === 'gr-a'), { timeoutMs: 5000, message: 'gr-a back on B' });
  });
});
