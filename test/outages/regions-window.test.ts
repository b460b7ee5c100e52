// The renewal window across regions (docs/contract.md §9), with a real redis-server per region and replicas
// started in-process: region A's Redis is frozen for three leases (its hold is far longer) and thawed. No
// replica, A's own or B's (a follower, which lapses on A's clock through its due reads), nor a replica of B
// started in the window, ever lists a complete view without A's pool whose relay renewed through the
// outage, and no watch stream carries a `delete` for it; the pool whose relay stopped before the outage
// lapses everywhere within the window after it. The outage shows in A's entry, one log line on each
// replica, and the metrics.
import { describe, expect, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import {
  A,
  B,
  COMMAND_TIMEOUT_MS,
  DUE_GRACE_MS,
  entryOf,
  keepRegistered,
  LEASE_MS,
  names,
  openWatch,
  poolOf,
  regionsFile,
  startReplica,
  useRegions,
  type Replica,
} from '../regions/support.js';

const { servers, track } = useRegions([A, B]);

/** Far longer than the outage: the follower holds A, it never drops it. */
const HOLD_MS = 20_000;
const OUTAGE_MS = 3 * LEASE_MS;
/**
 * The replicas' heartbeat interval: the relays send every HEARTBEAT_INTERVAL_MS (0.3 s), well within it,
 * so they renew within the window even on a loaded machine.
 */
const REPLICA_HEARTBEAT_INTERVAL_MS = 1000;
/** Heartbeat interval + command timeout. */
const WINDOW_MS = REPLICA_HEARTBEAT_INTERVAL_MS + COMMAND_TIMEOUT_MS;
/** Reconnects (at most 2 s for a home store), sweeps and due reads (every 250 ms) on a loaded machine. */
const SLACK_MS = 2500;

describe('regions: the renewal window after an outage of a region store', () => {
  it("A's Redis frozen for three leases: the renewed pool never leaves a complete list anywhere, the dead one lapses after the window", async () => {
    const file = regionsFile(servers);
    const start = (region: string) =>
      startReplica({ region, regions: file, holdMs: HOLD_MS, heartbeatIntervalMs: REPLICA_HEARTBEAT_INTERVAL_MS }).then(track);
    const onA = await start(A);
    const onB = await start(B);
    const live = track(await keepRegistered(onA.url, poolOf(A, 'a-live')));
    const dead = track(await keepRegistered(onA.url, poolOf(A, 'a-dead')));
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));
    const everything = async (replica: Replica) => {
      const list = await replica.list();
      return list.complete && names(list).join() === 'a-dead,a-live,b1';
    };
    await waitFor(async () => (await everything(onA)) && (await everything(onB)), { timeoutMs: 10_000, message: 'every pool on both' });
    const watches = [track(await openWatch(onA.url)), track(await openWatch(onB.url))];

    // A router polls every replica: a complete list must never lack a pool whose relay renews.
    const replicas: Replica[] = [onA, onB];
    const wrong: string[] = [];
    const router = track(
      repeatEvery(25, () =>
        Promise.all(
          replicas.map(async (replica) => {
            const list: PoolList = await replica.list();
            const missing = ['a-live', 'b1'].filter((name) => !names(list).includes(name));
            if (list.complete && missing.length > 0) wrong.push(`${replica.url} (${replica.region}) complete without ${missing.join()}`);
          }),
        ),
      ),
    );

    await dead.stop();
    servers.get(A)!.pause();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    servers.get(A)!.resume();
    const thawedAt = performance.now();

    // A replica of B started in the window: complete only with A's renewed pool.
    const late = await start(B);
    replicas.push(late);

    const gone = async (replica: Replica) => !names(await replica.list()).includes('a-dead');
    await waitFor(async () => (await gone(onA)) && (await gone(onB)) && (await gone(late)), {
      timeoutMs: 15_000,
      intervalMs: 20,
      message: 'the dead pool lapsed everywhere',
    });
    const lapsedAfterMs = performance.now() - thawedAt;
    for (const replica of replicas) await waitFor(() => everythingBut(replica), { timeoutMs: 5000, message: `${replica.url} complete` });
    await router.stop();
    expect(wrong).toEqual([]);
    for (const watch of watches) {
      // No `delete` of the renewed pool, and no complete `resync` without it (the dead one may leave either way).
      const deleted = watch.of('delete').map((m) => (m.data as { pool: { name: string } }).pool.name);
      expect(deleted).not.toContain('a-live');
      const resyncs = watch.of('resync').map((m) => m.data as PoolList);
      for (const resync of resyncs.filter((r) => r.complete)) expect(names(resync)).toContain('a-live');
      expect(resyncs.some((r) => !r.complete)).toBe(true);
    }
    // Lapsed after the window, on the followers with their due read's grace on top.
    expect(lapsedAfterMs).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(lapsedAfterMs).toBeLessThanOrEqual(WINDOW_MS + DUE_GRACE_MS + SLACK_MS);
    expect(live.lastStatus).toBe(200);

    // Seen: A's entry names the outage's end, its window closed by now; one line on each replica that
    // lived through it, with its length; the counter.
    for (const replica of [onA, onB]) {
      const entry = entryOf(await replica.list(), A)!;
      expect(Date.parse(entry.last_outage_ended!)).toBeGreaterThan(0);
      await waitFor(async () => entryOf(await replica.list(), A)?.renewal_window_open === false, { message: 'the window closed' });
      const lines = replica.logs.lines.filter((l) => l.msg === 'store outage ended');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 40, region: A, window_ms: WINDOW_MS });
      expect(lines[0]!.outage_ms).toBeGreaterThanOrEqual(OUTAGE_MS - 1000);
      expect(lines[0]!.leases_in_window).toBeGreaterThanOrEqual(2);
      const metrics = await (await fetch(`${replica.url}/metrics`)).text();
      expect(metrics).toContain(`poolscope_store_outages_total{region="${A}"} 1`);
      expect(metrics).toContain(`poolscope_store_renewal_window_open{region="${A}"} 0`);
    }
  });
});

async function everythingBut(replica: Replica): Promise<boolean> {
  const list = await replica.list();
  return list.complete && names(list).join() === 'a-live,b1';
}
