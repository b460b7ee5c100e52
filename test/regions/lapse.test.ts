// A region with no replica left still lapses (docs/contract.md §7): every replica of region A stops while
// A's Redis stays up, so nobody sweeps A and no lapse is ever logged there; B reads A's due deadlines on
// A's clock and A's pools leave B's list within lease + 2 s. B's own pools and A's entry are untouched.
import { describe, expect, it } from 'vitest';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import { throughout, waitFor } from '../support/wait.js';
import { A, B, entryOf, holdsPool, inspectRedis, keepRegistered, LEASE_MS, names, poolOf, regionsFile, useRegions } from './support.js';

const { servers, track, startReplicas } = useRegions([A, B]);

describe('regions: a region nobody sweeps', () => {
  it("lapses A's pools on B within lease + 2 s once every replica of A has stopped", async () => {
    const file = regionsFile(servers);
    const [onA, onB] = await startReplicas(file, [A, B]);
    const a1 = poolOf(A, 'a1');
    track(await keepRegistered(onA.url, a1));
    track(await keepRegistered(onA.url, poolOf(A, 'a2')));
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));
    await waitFor(async () => names(await onB.list()).length === 3, { timeoutMs: 10_000, message: 'three pools on B' });

    // The relays go on trying A's replica, which is gone: nothing renews A's leases any more.
    await onA.stop();
    const stoppedAt = performance.now();
    await waitFor(async () => names(await onB.list()).join() === 'b1', { timeoutMs: LEASE_MS + 5000, intervalMs: 20, message: "A's pools gone from B" });
    expect(performance.now() - stoppedAt).toBeLessThanOrEqual(LEASE_MS + 2000);

    // A is still read in full: its pools lapsed, the region was not dropped.
    const list = await onB.list();
    expect(entryOf(list, A)).toEqual({ name: A, complete: true, dropped: false });
    expect(list.complete).toBe(true);
    // Nobody swept A: the lease is still in A's deadlines (its hash too: it outlives the deadline by a
    // backstop, docs/contract.md §9), and A's log holds its upsert only.
    const inA = track(inspectRedis(servers.get(A)!.url));
    const { prefix } = file.find((r) => r.name === A)!;
    expect(await holdsPool(inA.redis, prefix, a1)).toEqual({ hash: true, deadline: true, logged: true });
    expect((await inA.redis.xrange(createStoreKeys(prefix).changes, '-', '+')).map(([, fields]) => fields[1])).toEqual(['upsert', 'upsert']);
    // And they stay gone (a later read of the same due leases changes nothing).
    await throughout(600, 100, async () => expect(names(await onB.list())).toEqual(['b1']));
  });
});
