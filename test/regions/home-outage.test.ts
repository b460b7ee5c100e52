// A home region's Redis goes down (docs/contract.md §7): its replica answers POST /pools with 503 (so a
// PoolRelay moves to its fallback replica, in another region) and keeps its whole view, the home entry incomplete but
// never dropped however long the outage lasts (self-preservation, §5); a replica of another region goes
// on serving its own pools with its own entry complete.
import { describe, expect, it } from 'vitest';
import { startRelay } from '../../src/relay/index.js';
import { postJson } from '../support/http.js';
import { eventually, throughout } from '../support/wait.js';
import { A, B, COMMAND_TIMEOUT_MS, entryOf, HOLD_MS, keepRegistered, leaseRegionsByName, names, poolOf, regionsFile, useRegions } from './support.js';

const { servers, track, startReplicas } = useRegions([A, B]);

describe("regions: the home region's Redis is down", () => {
  it('answers POST /pools with 503 and keeps its view, never dropped; the other region serves its pools complete', async () => {
    const [onA, onB] = await startReplicas(regionsFile(servers), [A, B]);
    track(await keepRegistered(onA.url, poolOf(A, 'a1')));
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));
    // A PoolRelay of region A with B's replica as its fallback.
    const relay = track(startRelay({ servers: [onA.url], fallbackServers: [onB.url], registration: poolOf(A, 'a-relayed'), random: () => 0 }));
    await relay.registered;
    for (const replica of [onA, onB]) {
      await eventually(
        async () => {
          const list = await replica.list();
          expect(names(list)).toEqual(['a-relayed', 'a1', 'b1']);
          expect(list.complete).toBe(true);
        },
        { timeoutMs: 10_000 },
      );
    }

    await servers.get(A)!.kill();

    // Writes fail fast, with the contract's error body.
    await eventually(
      async () => {
        const started = performance.now();
        const response = await postJson(onA.url, poolOf(A, 'a1'));
        expect(response.status).toBe(503);
        expect(await response.json()).toMatchObject({ error: { code: 'store_unavailable' } });
        expect(performance.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + 1000);
      },
      { timeoutMs: 5000 },
    );
    // A's replica notices, and holds everything it knew: its own region's pools and B's.
    await eventually(async () => expect(entryOf(await onA.list(), A)).toMatchObject({ complete: false, dropped: false }), { timeoutMs: 5000 });
    expect((await fetch(`${onA.url}/healthz`)).status).toBe(503);

    // Longer than the hold (which drops a followed region) and than a lease: still held, never dropped.
    await throughout(HOLD_MS + 1000, 100, async () => {
      const onAList = await onA.list();
      expect(names(onAList)).toEqual(['a-relayed', 'a1', 'b1']);
      expect(onAList.complete).toBe(false);
      expect(entryOf(onAList, A)).toMatchObject({ complete: false, dropped: false, unreachable_since: expect.any(String) });
      expect(entryOf(onAList, B)).toEqual({ name: B, complete: true, dropped: false });

      const onBList = await onB.list();
      expect(onBList.pools.map((p) => p.name)).toContain('b1');
      expect(entryOf(onBList, B)).toEqual({ name: B, complete: true, dropped: false });
    });
    // B, which only follows A, did drop it once the hold ran out; A's replica never drops its own region.
    await eventually(async () => expect(entryOf(await onB.list(), A)).toMatchObject({ complete: false, dropped: true }), { timeoutMs: 5000 });
    // The relay answered with 503 moved to B's replica: its pool is still listed there, its lease in B.
    expect(relay.status.fallback).toBe(true);
    expect(leaseRegionsByName(await onB.list())).toEqual({ 'a-relayed': [B], b1: [B] });
    expect(entryOf(await onA.list(), A)).toMatchObject({ dropped: false });
  });
});
