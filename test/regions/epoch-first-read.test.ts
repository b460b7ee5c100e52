// No false "store lost its data" (docs/contract.md §7): a replica of region B starts before any replica of
// region A has written A's epoch, so its first read of A finds none. A's replica starts later, writes the
// epoch and a pool; then B's connection to A blips (a proxy resets it) and B reads A again. A's data was
// never lost: B's entry for A must be `complete: true` again as soon as it is read, with no refill of a
// lease and no `the store lost its data` line.
import { describe, expect, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { A, B, entryOf, keepRegistered, LEASE_MS, poolOf, regionsFile, useRegions } from './support.js';

const { servers, track, startReplicas, proxyTo } = useRegions([A, B]);

describe('regions: an epoch written after the first read', () => {
  it('is not a loss of data when the follower reads the region again', async () => {
    const file = regionsFile(servers);
    const proxy = await proxyTo(A);
    const [onB] = await startReplicas(file, [B], { [B]: { [A]: proxy.url } });
    await waitFor(async () => entryOf(await onB.list(), A)?.complete === true, { timeoutMs: 10_000, message: 'A read (no epoch yet)' });

    const [onA] = await startReplicas(file, [A]);
    track(await keepRegistered(onA.url, poolOf(A, 'a1')));
    await waitFor(async () => (await onB.list()).pools.some((p) => p.name === 'a1'), { timeoutMs: 10_000, message: 'a1 on B' });

    // Every reply of B from the blip on, until a lease has passed.
    const replies: PoolList[] = [];
    const poller = track(repeatEvery(50, async () => replies.push(await onB.list())));
    proxy.reset();
    await waitFor(() => replies.length > 0 && entryOf(replies.at(-1)!, A)?.complete === true && replies.some((r) => !entryOf(r, A)?.complete), {
      timeoutMs: 5000,
      message: 'A read again after the blip',
    }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 1000));
    await poller.stop();

    const lost = onB.logs.lines.filter((line) => line.msg.startsWith('the store lost its data'));
    expect(lost).toEqual([]);
    const reasons = replies.map((r) => entryOf(r, A)?.reason).filter((reason) => reason !== undefined);
    expect(reasons.filter((reason) => reason!.startsWith('store lost its data'))).toEqual([]);
    const last = replies.at(-1)!;
    expect(entryOf(last, A)).toEqual({ name: A, complete: true, dropped: false });
    expect(last.complete).toBe(true);
  });
});
