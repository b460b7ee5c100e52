// A big region read over a slow WAN (docs/contract.md §7, docs/design.md "Snapshots that scale with
// bytes"): region A holds 2,000 registrations of 16 KiB (32 MiB), and B's replica reads it through a
// TCP proxy that carries 6 MiB/s with 40 ms each way, so the snapshot takes about five seconds to cross
// while every command has a 2 s timeout (above the default 1 s so that a loaded test machine's stalls are
// not what is tested; one read script of 1,000 such pools alone took 2.7 s to cross before). The
// follower reads A in one go, without a single failed read (each pipelined read is timed from when the
// link could start carrying its reply, not from when it was sent behind megabytes of others), and again
// after its connections are cut.
import { describe, expect, it } from 'vitest';
import { poolListSchema, type Registration } from '../../src/contract/index.js';
import { postJson } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { A, B, entryOf, poolOf, regionsFile, startReplica, useRegions, via, type Replica } from './support.js';

const POOLS = 2000;
/** 32 capabilities of 510 characters: a registration of a little over 16 KiB. */
const CAPABILITIES = 32;
const RATE_BYTES_PER_S = 6 * 1024 * 1024;
const ONE_WAY_MS = 40;
/** Twice the default --redis-command-timeout-ms (see the header). */
const COMMAND_TIMEOUT_MS = 2000;
/** Long enough that nothing lapses during the test (no heartbeats are sent). */
const LEASE_MS = 600_000;
const POST_CONCURRENCY = 16;

const { servers, track, proxyTo } = useRegions([A, B]);

function bigPool(i: number): Registration {
  const capabilities = Array.from({ length: CAPABILITIES }, (_, c) => `${String(i).padStart(6, '0')}-${c}-`.padEnd(510, 'x'));
  return poolOf(A, `big-${i}`, { capabilities });
}

async function register(url: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: POST_CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const response = await postJson(url, bigPool(i));
        await response.body?.cancel();
        if (response.status !== 200) throw new Error(`POST /pools big-${i}: ${response.status}`);
      }
    }),
  );
}

/** Warnings and errors a replica logged about region A (a failed read of it shows here). */
const troubleWithA = (replica: Replica) =>
  replica.logs.lines.filter((line) => line.level >= 40 && line.region === A);

describe('regions: a big region over a slow WAN', () => {
  it('reads 2,000 registrations of 16 KiB through a 6 MiB/s, 40 ms link with no failed read, and again after a cut', { timeout: 180_000 }, async () => {
    const file = regionsFile(servers, COMMAND_TIMEOUT_MS);
    const onA = track(await startReplica({ region: A, regions: file, leaseMs: LEASE_MS }));
    await register(onA.url, POOLS);
    const bytes = Buffer.byteLength(JSON.stringify(bigPool(0))) * POOLS;
    expect(bytes).toBeGreaterThan(POOLS * 16 * 1024);
    const transferMs = (bytes / RATE_BYTES_PER_S) * 1000;

    const proxy = await proxyTo(A);
    proxy.setDelay(ONE_WAY_MS);
    proxy.setRate(RATE_BYTES_PER_S);
    const onB = track(await startReplica({ region: B, regions: via(file, { [A]: proxy.url }), leaseMs: LEASE_MS }));
    // Polled with a filter that matches none of them: the regions entries without 32 MiB of JSON each time.
    const aComplete = async () => {
      const response = await fetch(`${onB.url}/pools?model=none`);
      const list = poolListSchema.parse(await response.json());
      return entryOf(list, A)?.complete === true;
    };
    const applied = (from: number) => onB.logs.lines.slice(from).find((line) => line.msg === 'store snapshot applied' && line.region === A);
    // Bounded generously (a loaded CI machine); how close to the transfer time it comes is the regions
    // benchmark's to say. What fails today is the read itself: the log says so below.
    await waitFor(async () => applied(0) !== undefined && (await aComplete()), {
      timeoutMs: transferMs * 4 + 30_000,
      intervalMs: 200,
      message: `B reads A's ${POOLS} pools`,
    }).catch((error: Error) => {
      throw new Error(`${error.message}; B's warnings about A: ${JSON.stringify(troubleWithA(onB).map((l) => `${l.msg}: ${String(l.reason ?? l.err ?? '')}`))}`);
    });
    expect(troubleWithA(onB)).toEqual([]);
    expect(applied(0)?.leases).toBe(POOLS);

    // A cut: every connection to A dropped. B reads A again over the same slow link, with no read that
    // timed out once its connections came back.
    const before = onB.logs.lines.length;
    proxy.reset();
    await waitFor(async () => onB.logs.lines.slice(before).some((line) => line.region === A && line.level >= 40) && (await aComplete()), {
      timeoutMs: transferMs * 4 + 30_000,
      intervalMs: 200,
      message: 'B notices the cut and reads A again',
    });
    const failedReads = onB.logs.lines.slice(before).filter((line) => line.region === A && String(line.err ?? line.reason ?? '').includes('timed out'));
    expect(failedReads).toEqual([]);
    const list = await onB.list();
    expect(list.pools.length).toBe(POOLS);
    expect(list.pools.every((pool) => pool.capabilities.length === CAPABILITIES)).toBe(true);
  });
});
