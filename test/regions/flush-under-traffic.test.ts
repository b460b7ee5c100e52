// A region's Redis flushed under traffic (docs/contract.md §7): heartbeats keep flowing to region A's
// replica while A's Redis is emptied (FLUSHALL). A pool whose relay stopped just before the flush lost its
// lease with the data; it must leave every list, the region's own replica's and a follower's in region B,
// once the refill has had its lease, while the pool whose relay renews stays listed throughout. Each of the
// two replicas says `the store lost its data` once.
import { describe, expect, it } from 'vitest';
import { repeatEvery, waitFor } from '../support/wait.js';
import { A, B, inspectRedis, keepRegistered, LEASE_MS, names, poolOf, regionsFile, useRegions } from './support.js';

const { servers, track, startReplicas } = useRegions([A, B]);
const BUSY = 10;

describe('regions: a flush of a region’s Redis under traffic', () => {
  it('is noticed by the region’s own replica and by a follower: the pool nobody renews leaves both lists', async () => {
    const [onA, onB] = await startReplicas(regionsFile(servers), [A, B]);
    track(await keepRegistered(onA.url, poolOf(A, 'alive')));
    // Traffic: relays renewing every 50 ms, so the recreated log gets entries at once after the flush,
    // before the follower's blocked XREAD runs out (the case that went unnoticed).
    for (let i = 0; i < BUSY; i += 1) track(await keepRegistered(onA.url, poolOf(A, `busy${i}`), 50));
    const stopped = await keepRegistered(onA.url, poolOf(A, 'stopped'));
    for (const replica of [onA, onB]) {
      await waitFor(async () => names(await replica.list()).length === BUSY + 2, { timeoutMs: 10_000, message: `every pool on ${replica.region}` });
    }
    // 'alive' must be listed in every reply from here on, on both replicas.
    const missing: string[] = [];
    const poller = track(
      repeatEvery(50, async () => {
        for (const replica of [onA, onB]) if (!names(await replica.list()).includes('alive')) missing.push(replica.region);
      }),
    );

    await stopped.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const redis = track(inspectRedis(servers.get(A)!.url));
    await redis.redis.flushall();

    for (const replica of [onA, onB]) {
      await waitFor(async () => !names(await replica.list()).includes('stopped'), {
        timeoutMs: 3 * LEASE_MS + 5000,
        message: `the flushed pool leaving ${replica.region}`,
      });
    }
    await poller.stop();
    expect(missing).toEqual([]);
    for (const replica of [onA, onB]) {
      const lost = replica.logs.lines.filter((line) => line.msg.startsWith('the store lost its data') && (replica === onA ? true : line.region === A));
      expect(lost.length, replica.region).toBeGreaterThanOrEqual(1);
      const list = await replica.list();
      expect(names(list).filter((name) => !name.startsWith('busy'))).toEqual(['alive']);
    }
  });
});
