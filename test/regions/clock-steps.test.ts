// Regions whose Redis clocks disagree or step (docs/contract.md §7, "Clocks"): region B's redis-server runs
// with a wall clock shifted by an LD_PRELOAD shim (test/support/shifted-redis.ts), as a Redis host whose
// NTP stepped, or that ran ahead for hours, would. Its monotonic clock runs on; only TIME, key expiry and
// stream ids move. A's Redis keeps the real clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startShiftedRedis, type ShiftedRedis } from '../support/shifted-redis.js';
import { throughout, waitFor } from '../support/wait.js';
import { A, B, keepRegistered, LEASE_MS, names, openWatch, poolOf, regionsFile, startReplica, useCleanup, type Heartbeats } from './support.js';

const servers = new Map<string, PrivateRedis>();
let shifted: ShiftedRedis;
beforeAll(async () => {
  servers.set(A, await startPrivateRedis());
  shifted = await startShiftedRedis(0);
  servers.set(B, shifted);
});
afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.stop()));
});
const track = useCleanup();

const modelOf = (list: PoolList, name: string) => list.pools.find((p) => p.name === name)?.model;

describe('regions: clocks that disagree', () => {
  it("shows the later content change of a pool leased in two regions, whatever B's clock says", async () => {
    // B's clock runs 30 s ahead of A's: on B's clock, anything B writes looks 30 s newer than what A writes.
    await shifted.shift(30_000);
    const file = regionsFile(servers);
    const onA = track(await startReplica({ region: A, regions: file }));
    const onB = track(await startReplica({ region: B, regions: file }));
    const pool = poolOf(A, 'moved', { model: 'old-model' });

    // The relay registers in B first; both replicas show it.
    const inB = track(await keepRegistered(onB.url, pool));
    for (const replica of [onA, onB]) {
      await waitFor(async () => modelOf(await replica.list(), 'moved') === 'old-model', { timeoutMs: 5000, message: 'old-model listed' });
    }
    // Then (a failover, or a second relay) the same pool is registered in A with new content, while B's
    // lease is still renewed: both leases live, and A's content is the later change.
    track(await keepRegistered(onA.url, { ...pool, model: 'new-model' }));
    await waitFor(async () => (await onA.list()).pools.find((p) => p.name === 'moved')?.lease_regions?.length === 2, {
      timeoutMs: 5000,
      message: 'leased in both regions',
    });
    // Every poll of both replicas shows the later change, for two leases.
    for (const replica of [onA, onB]) {
      await waitFor(async () => modelOf(await replica.list(), 'moved') === 'new-model', { timeoutMs: 3000, message: `new-model on ${replica.region}` });
    }
    await throughout(2 * LEASE_MS, 100, async () => {
      for (const replica of [onA, onB]) expect(modelOf(await replica.list(), 'moved')).toBe('new-model');
    });

    // A later change in B, in turn, is shown: the rule follows the order of the changes, not a region.
    await inB.change({ ...pool, model: 'newest-model' });
    for (const replica of [onA, onB]) {
      await waitFor(async () => modelOf(await replica.list(), 'moved') === 'newest-model', { timeoutMs: 3000, message: `newest-model on ${replica.region}` });
    }
    await throughout(LEASE_MS, 100, async () => {
      for (const replica of [onA, onB]) expect(modelOf(await replica.list(), 'moved')).toBe('newest-model');
    });
  });

  it("flaps nothing when B's clock steps 60 s forward, and a pool whose relay stops still lapses", async () => {
    await shifted.shift(0);
    const file = regionsFile(servers);
    const onA = track(await startReplica({ region: A, regions: file }));
    const onB = track(await startReplica({ region: B, regions: file }));
    const relays: Heartbeats[] = [];
    for (let i = 0; i < 10; i++) relays.push(track(await keepRegistered(onB.url, poolOf(B, `b${i}`))));
    for (const replica of [onA, onB]) {
      await waitFor(async () => names(await replica.list()).length === 10, { timeoutMs: 5000, message: `ten pools on ${replica.region}` });
    }
    const watches = [track(await openWatch(onA.url)), track(await openWatch(onB.url))];
    await waitFor(() => watches.every((w) => w.of('resync').length === 1), { timeoutMs: 5000, message: 'both watches open' });

    await shifted.shift(60_000);
    // For three leases after the step, both replicas list all ten pools, and neither watch saw a delete.
    await throughout(3 * LEASE_MS, 100, async () => {
      for (const replica of [onA, onB]) expect(names(await replica.list())).toHaveLength(10);
    });
    expect(watches[0]!.of('delete').map((m) => JSON.stringify(m.data))).toEqual([]);
    expect(watches[1]!.of('delete').map((m) => JSON.stringify(m.data))).toEqual([]);

    // A relay that stops after the step: its pool still leaves both lists within lease + 2 s.
    await relays[0]!.stop();
    const stoppedAt = performance.now();
    for (const replica of [onA, onB]) {
      await waitFor(async () => !names(await replica.list()).includes('b0'), { timeoutMs: LEASE_MS + 6000, intervalMs: 20, message: `b0 gone on ${replica.region}` });
    }
    expect(performance.now() - stoppedAt).toBeLessThanOrEqual(LEASE_MS + 2000);
  });

  it("lapses on A a pool of B renewed after B's clock stepped 60 s back, once B's relay and replicas stop", async () => {
    await shifted.shift(0);
    const file = regionsFile(servers);
    const onA = track(await startReplica({ region: A, regions: file }));
    const onB = await startReplica({ region: B, regions: file });
    const pool = poolOf(B, 'stepped');
    const first = await keepRegistered(onB.url, pool);
    await waitFor(async () => names(await onA.list()).includes('stepped'), { timeoutMs: 5000, message: 'stepped listed on A' });

    // The relay pauses (its lease runs on) while the clock steps back: whatever A reads of B meanwhile, it
    // knows the lease with the deadline its last renewal before the step set.
    await first.stop();
    await shifted.shift(-60_000);
    const steppedAt = performance.now();
    // Redis 7.0 times a blocked XREAD on its wall clock: the one A had waiting is answered only by A's
    // command timeout, and A reads B again. Wait until that is over, whatever the Redis version does.
    await waitFor(async () => performance.now() - steppedAt > 1000 && (await onA.list()).regions?.find((r) => r.name === B)?.complete, {
      timeoutMs: 5000,
      message: 'B read in full on A after the step',
    });
    expect(names(await onA.list())).toContain('stepped');

    // The relay renews again: on B's stepped clock each renewal sets a deadline 60 s below the one A knows.
    const again = await keepRegistered(onB.url, pool);
    await throughout(4 * 300, 100, () => expect(again.lastStatus).toBe(200));

    // Then the relay dies and so does every replica of B: nobody logs the lapse; A reads it on B's clock
    // and must take it (contract §7: within lease + 2 s).
    await again.stop();
    await onB.stop();
    const stoppedAt = performance.now();
    await waitFor(async () => !names(await onA.list()).includes('stepped'), { timeoutMs: LEASE_MS + 6000, intervalMs: 20, message: 'stepped gone on A' });
    expect(performance.now() - stoppedAt).toBeLessThanOrEqual(LEASE_MS + 2000);
    expect((await onA.list()).complete).toBe(true);
  });
});
