// A region's Redis restored from an older copy under traffic (docs/contract.md §7): `SAVE` takes the copy,
// a pool registers after it, then `DEBUG RELOAD NOSAVE` puts the copy back (the epoch survives: same data
// lifetime, older data). Every replica must take it as a loss of data (its change log went back) and hold
// the pool the copy lacks while its relay re-registers it, so that pool never leaves any list.
import { describe, expect, it } from 'vitest';
import { repeatEvery, waitFor } from '../support/wait.js';
import { A, B, inspectRedis, keepRegistered, LEASE_MS, names, poolOf, regionsFile, useRegions } from './support.js';

const { servers, track, startReplicas } = useRegions([A, B], (name) => (name === A ? ['--enable-debug-command', 'yes'] : []));

describe('regions: a restore of a region’s Redis under traffic', () => {
  it('is taken as a loss of data by the region’s own replica and a follower: the newer pool stays listed', async () => {
    const [onA, onB] = await startReplicas(regionsFile(servers), [A, B]);
    track(await keepRegistered(onA.url, poolOf(A, 'old')));
    for (let i = 0; i < 5; i += 1) track(await keepRegistered(onA.url, poolOf(A, `busy${i}`), 50));
    const redis = track(inspectRedis(servers.get(A)!.url));
    await redis.redis.save();
    track(await keepRegistered(onA.url, poolOf(A, 'late')));
    for (const replica of [onA, onB]) {
      await waitFor(async () => names(await replica.list()).includes('late'), { timeoutMs: 10_000, message: `late on ${replica.region}` });
    }
    const missing: string[] = [];
    const poller = track(
      repeatEvery(20, async () => {
        for (const replica of [onA, onB]) if (!names(await replica.list()).includes('late')) missing.push(replica.region);
      }),
    );
    await redis.redis.call('DEBUG', 'RELOAD', 'NOSAVE');
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 2000));
    await poller.stop();
    expect(missing).toEqual([]);
    for (const replica of [onA, onB]) {
      const lost = replica.logs.lines.filter((line) => line.msg.startsWith('the store lost its data (its change log went back)'));
      expect(lost.length, replica.region).toBeGreaterThanOrEqual(1);
    }
  });
});
