// A PoolRelay's fallback replicas keep its pool listed when its region's replicas die (docs/contract.md
// §7): a relay with servers = [A's replica] and fallbackServers = [B's replica]; A's replica stops, the
// relay heartbeats B's, and the pool never leaves B's list while its lease moves from region A to B.
import { describe, expect, it } from 'vitest';
import { startRelay, type HeartbeatOutcome } from '../../src/relay/index.js';
import { silentLogger } from '../support/logs.js';
import { eventually, throughout, waitFor } from '../support/wait.js';
import { A, B, DUE_GRACE_MS, LEASE_MS, leaseRegionsByName, poolOf, regionsFile, useRegions } from './support.js';

const { servers, track, startReplicas } = useRegions([A, B]);

describe('regions: relay fallback to another region', () => {
  it("keeps the pool listed on B when A's replica dies, its lease now in region B", async () => {
    const [onA, onB] = await startReplicas(regionsFile(servers), [A, B]);
    const beats: HeartbeatOutcome[] = [];
    const relay = track(
      startRelay({
        servers: [onA.url],
        fallbackServers: [onB.url],
        registration: poolOf(A, 'roaming'),
        logger: silentLogger(),
        random: () => 0,
        onHeartbeat: (outcome) => beats.push(outcome),
      }),
    );
    await relay.registered;
    await eventually(async () => expect(leaseRegionsByName(await onB.list())).toEqual({ roaming: [A] }), { timeoutMs: 10_000 });

    await onA.stop();
    await waitFor(() => relay.status.fallback, { timeoutMs: 5000, message: 'the relay on its fallback' });
    expect(beats.filter((b) => b.ok).at(-1)?.server).toBe(onB.url);

    // Listed on B at every look, from A's replica dying until A's lease has run out (no one sweeps A now)
    // and been read as lapsed there.
    let regions: string[] | undefined;
    await throughout(LEASE_MS + DUE_GRACE_MS + 1000, 50, async () => {
      const list = await onB.list();
      expect(list.pools.map((p) => p.name)).toEqual(['roaming']);
      regions = list.pools[0]!.lease_regions;
    });
    expect(regions).toEqual([B]);
    const list = await onB.list();
    expect(list.complete).toBe(true);
    expect(list.pools[0]).toMatchObject({ name: 'roaming', lease_regions: [B], state: 'live' });
  });
});
