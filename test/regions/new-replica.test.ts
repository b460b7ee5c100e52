// A new replica is complete with every region's pools (docs/contract.md §7): pools already live in three
// regions when a replica starts; before it has read every region (one is behind a slow path) it says
// `complete: false`, and its first reply (GET /pools, and the first `resync` of its watch stream) with
// `complete: true` lists all of them, each with its lease region.
import { describe, expect, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { waitFor } from '../support/wait.js';
import { keepRegistered, leaseRegionsByName, listPools, openWatch, poolOf, regionsFile, useRegions, via } from './support.js';

const REGIONS = ['ap-south-1', 'eu-west-1', 'us-east-1'] as const;
const { servers, track, startReplicas, proxyTo } = useRegions(REGIONS);
/** One region is far from the new replica: every chunk delayed, each way, under a longer command timeout. */
const FAR_DELAY_MS = 100;
const FAR_TIMEOUT_MS = 1000;

describe('regions: a replica that starts after pools exist', () => {
  it('lists every region’s pools in its first complete reply', async () => {
    const file = regionsFile(servers);
    const expected: Record<string, string[]> = {};
    for (const replica of await startReplicas(file, REGIONS)) {
      for (const name of [`${replica.region}-p1`, `${replica.region}-p2`]) {
        track(await keepRegistered(replica.url, poolOf(replica.region, name)));
        expected[name] = [replica.region];
      }
    }

    // The newcomer: a second replica of eu-west-1, far from us-east-1 (a slow path: it listens before it
    // has read that region). Its first replies are read as soon as it listens.
    const proxy = await proxyTo('us-east-1');
    proxy.setDelay(FAR_DELAY_MS);
    const far = via(file, { 'us-east-1': proxy.url }).map((r) =>
      r.name === 'us-east-1' ? { ...r, commandTimeoutMs: FAR_TIMEOUT_MS } : r,
    );
    const [fresh] = await startReplicas(far, ['eu-west-1']);
    const [watch, firstList] = await Promise.all([openWatch(fresh.url), listPools(fresh.url)]);
    track(watch);
    const replies: PoolList[] = [firstList];
    const complete = await waitFor(
      async () => {
        const list = await listPools(fresh.url);
        replies.push(list);
        return list.complete ? list : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 5, message: 'a complete reply' },
    );
    expect(leaseRegionsByName(complete)).toEqual(expected);
    expect(complete.regions).toEqual(REGIONS.map((name) => ({ name, complete: true, dropped: false })));
    // The replies before it said they were incomplete, naming the region not read yet.
    expect(replies[0]!.complete).toBe(false);
    expect(replies[0]!.regions?.find((r) => r.name === 'us-east-1')).toMatchObject({ complete: false, dropped: false });
    for (const reply of replies) if (reply.complete) expect(reply.pools).toHaveLength(6);

    // The stream: the first `resync` that says complete lists them all too.
    await waitFor(() => watch.of('resync').some((m) => (m.data as PoolList).complete), { timeoutMs: 5000, message: 'a complete resync' });
    const firstComplete = watch.of('resync').find((m) => (m.data as PoolList).complete)!.data as PoolList;
    expect(leaseRegionsByName(firstComplete)).toEqual(expected);
  });
});
