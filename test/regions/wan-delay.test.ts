// A change reaches another region only through Redis (docs/contract.md §7): replica B follows region A's
// Redis across a TCP proxy that delays every chunk by 300 ms each way, so A's new pool shows on B no sooner
// than the path can carry it, and it does arrive (how soon, one way later as a push, is measured by the
// regions benchmark, not asserted in a timed test). Replicas never talk to each other.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { A, B, keepRegistered, names, poolOf, regionsFile, useRegions } from './support.js';

const DELAY_MS = 300;
/** Above the delayed round trip (2 × 300 ms): a slow path is not a cut one. */
const WAN_TIMEOUT_MS = 1500;

const { servers, track, startReplicas, proxyTo } = useRegions([A, B]);

describe('regions: a change crosses only through Redis', () => {
  it("shows A's new pool on B no sooner than the delayed path delivers it, and it arrives", async () => {
    const proxy = await proxyTo(A);
    const [onA, onB] = await startReplicas(regionsFile(servers, WAN_TIMEOUT_MS), [A, B], { [B]: { [A]: proxy.url } });
    await waitFor(async () => (await onB.list()).complete, { timeoutMs: 10_000, message: 'B complete' });

    proxy.setDelay(DELAY_MS);
    const sent = performance.now();
    track(await keepRegistered(onA.url, poolOf(A, 'far-away')));
    // A lists it as soon as its own Redis has it.
    expect(names(await onA.list())).toEqual(['far-away']);
    await waitFor(async () => names(await onB.list()).includes('far-away'), { timeoutMs: 10_000, intervalMs: 5, message: 'the pool on B' });
    const arrived = performance.now() - sent;

    expect(arrived).toBeGreaterThanOrEqual(DELAY_MS);
    const list = await onB.list();
    expect(list.pools.find((p) => p.name === 'far-away')?.lease_regions).toEqual([A]);
    // A slow path is not a cut one: B still reads A in full.
    expect(list.complete).toBe(true);
  });
});
