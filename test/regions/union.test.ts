// The union (docs/contract.md §7): three regions, each with its own redis-server and a replica. A pool
// registered in each region is listed by every replica with its `lease_regions`, every reply carries a
// complete entry per region and its top-level `complete` is their AND; a heartbeat is written to its home
// region's Redis only; and a key held in two regions (a PoolRelay that moved) is listed once, with both
// regions and the content of the latest change, the same on every replica.
import { describe, expect, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { eventually, throughout } from '../support/wait.js';
import { holdsPool, inspectRedis, keepRegistered, keysUnder, leaseRegionsByName, names, poolOf, regionsFile, useRegions, type Replica } from './support.js';

const REGIONS = ['ap-south-1', 'eu-west-1', 'us-east-1'] as const;
const { servers, track, startReplicas } = useRegions(REGIONS);

/** A replica per region, all on one regions file. */
async function startWorld() {
  const file = regionsFile(servers);
  const started = await startReplicas(file, REGIONS);
  const replicas: Record<string, Replica> = Object.fromEntries(REGIONS.map((region, i) => [region, started[i]!]));
  return { file, replicas };
}

/** The reply's top-level `complete` is the AND of its regions' entries, which name every region once. */
function expectConsistent(list: PoolList) {
  expect(list.regions?.map((r) => r.name)).toEqual([...REGIONS]);
  expect(list.complete).toBe(list.regions!.every((r) => r.complete));
}

describe('regions: the union on every replica', () => {
  it('lists the pool of each region on every replica, with its lease_regions and a complete entry per region', async () => {
    const { replicas } = await startWorld();
    for (const region of REGIONS) track(await keepRegistered(replicas[region]!.url, poolOf(region, `pool-${region}`)));

    for (const region of REGIONS) {
      await eventually(
        async () => {
          const list = await replicas[region]!.list();
          expectConsistent(list);
          expect(list.complete).toBe(true);
          expect(list.regions).toEqual(REGIONS.map((name) => ({ name, complete: true, dropped: false })));
          expect(leaseRegionsByName(list)).toEqual(Object.fromEntries(REGIONS.map((r) => [`pool-${r}`, [r]])));
        },
        { timeoutMs: 10_000 },
      );
    }
    // And it stays so while the heartbeats go on (renewals cross no region).
    await throughout(2 * 300, 100, async () => {
      for (const region of REGIONS) {
        const list = await replicas[region]!.list();
        expectConsistent(list);
        expect(names(list)).toEqual(REGIONS.map((r) => `pool-${r}`));
      }
    });
  });

  it("writes a heartbeat to its home region's Redis only", async () => {
    const { file, replicas } = await startWorld();
    const pool = poolOf('eu-west-1', 'home-only');
    track(await keepRegistered(replicas['eu-west-1']!.url, pool));
    await eventually(async () => expect(names(await replicas['us-east-1']!.list())).toEqual(['home-only']), { timeoutMs: 10_000 });

    for (const { name, redisUrl, prefix } of file) {
      const inspector = track(inspectRedis(redisUrl));
      const held = await holdsPool(inspector.redis, prefix, pool);
      if (name === 'eu-west-1') {
        expect(held).toEqual({ hash: true, deadline: true, logged: true });
      } else {
        expect(held).toEqual({ hash: false, deadline: false, logged: false });
        // Nothing of any pool: a follower writes nothing, not even an epoch or a stamp (only the region's
        // own replicas, which register nothing here, write them).
        expect((await keysUnder(inspector.redis, prefix)).filter((key) => !/:(epoch|stamp)$/.test(key))).toEqual([]);
      }
    }
  });

  it('lists a key held in two regions once, with both regions and the latest content, the same on every replica', async () => {
    const { file, replicas } = await startWorld();
    const moved = poolOf('us-east-1', 'moved', { model: 'model-first' });
    // The relay first heartbeats us-east-1, then (failed over) eu-west-1 with newer content.
    const inUs = track(await keepRegistered(replicas['us-east-1']!.url, moved));
    await eventually(async () => expect(names(await replicas['ap-south-1']!.list())).toEqual(['moved']), { timeoutMs: 10_000 });
    const inEu = track(await keepRegistered(replicas['eu-west-1']!.url, { ...moved, model: 'model-second' }));

    const everyReplica = () => Object.values(replicas);
    const agreed = async (model: string) => {
      const lists = await Promise.all(everyReplica().map((replica) => replica.list()));
      for (const list of lists) {
        expect(list.pools).toHaveLength(1);
        expect(list.pools[0]).toMatchObject({ name: 'moved', model, lease_regions: ['eu-west-1', 'us-east-1'] });
        expect(list.complete).toBe(true);
      }
      // One answer everywhere: the same pool, field for field.
      for (const list of lists) expect(list.pools[0]).toEqual(lists[0]!.pools[0]);
    };
    await eventually(() => agreed('model-second'), { timeoutMs: 10_000 });

    // The older region changes its content: now that registration is the latest change, on every replica.
    await inUs.change({ ...moved, model: 'model-third' });
    await eventually(() => agreed('model-third'), { timeoutMs: 10_000 });
    // A replica that starts now learns both leases from snapshots, not from the log, and answers the same.
    [replicas.late] = await startReplicas(file, ['ap-south-1']);
    await eventually(() => agreed('model-third'), { timeoutMs: 10_000 });
    // Renewals of the other region's older content change nothing, on any replica.
    await throughout(3 * 300, 100, () => agreed('model-third'));
    expect(inEu.lastStatus).toBe(200);
  });
});
