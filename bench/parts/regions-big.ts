// The regions part's big-registration follow (docs/design.md "Snapshots that scale with bytes"): r1 holds
// BIG_POOLS registrations of about 16 KiB, and a new r2 replica reads it through a path that carries
// RATE_BYTES_PER_S each way with ONE_WAY_MS each way (test/support/tcp-proxy.ts in the WAN process). Timed
// from the replica's `store snapshot applied` line for r1 (read_ms, apply_ms), judged against the bytes'
// transfer time at that rate + 2 s; also the replica's start to its list holding all of them, the reads
// of r1 that failed (none expected), and memory: each replica's RSS (VmRSS, VmHWM from /proc) before and
// after, per pool, and a GET /pools of the follower (its time, its size, the peak it cost).
// `BENCH_REGIONS_ONLY=big npm run bench:regions` runs this alone.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { waitFor } from '../../test/support/wait.js';
import { postAll } from '../lib/http.js';
import { readRegionView, startRegionReplica, startRegions } from '../lib/regions.js';
import { benchRegistration } from '../lib/replicas.js';
import { round } from '../lib/stats.js';
import { informational, judged, type Figure } from '../report/types.js';
import type { PartContext } from './part.js';

const ONE_WAY_MS = 40;
const RATE_BYTES_PER_S = 25_000_000;
/** 32 capabilities of 510 characters: a registration of a little over 16 KiB. */
const CAPABILITIES = 32;
const LEASE_SECS = 900;
const REGISTER_CONCURRENCY = 32;
const REGISTER_CHUNK = 1000;
const LABEL = 'big';

export function bigRegistration(index: number): Record<string, unknown> {
  const capabilities = Array.from({ length: CAPABILITIES }, (_, c) => `${String(index).padStart(6, '0')}-${c}-`.padEnd(510, 'x'));
  return benchRegistration(LABEL, index, { capabilities });
}

interface Memory {
  rssMiB: number;
  hwmMiB: number;
}

/** VmRSS and VmHWM (peak) of a process, MiB. */
async function memoryOf(pid: number): Promise<Memory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: round(kib('VmRSS') / 1024), hwmMiB: round(kib('VmHWM') / 1024) };
}

/** GET /pools read to its end: how long it took and how many bytes it was. */
function getPools(url: string): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http
      .get(`${url}/pools`, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => resolve({ ms: performance.now() - started, bytes }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

export async function measureBigFollow(pools: number, logger: PartContext['logger']): Promise<{ figures: Figure[]; method: string; details: Record<string, unknown> }> {
  const setup = await startRegions({
    replicas: { r1: 1, r2: 0 },
    oneWayDelayMs: ONE_WAY_MS,
    rateBytesPerSecond: RATE_BYTES_PER_S,
    holdSecs: 60,
    leaseSecs: LEASE_SECS,
  });
  try {
    const home = setup.site('r1').replicas[0]!;
    const homeEmpty = await memoryOf(home.child.pid!);
    logger.info({ pools }, 'regions (big): registering 16 KiB pools in r1');
    const registerStart = performance.now();
    for (let from = 0; from < pools; from += REGISTER_CHUNK) {
      const bodies = Array.from({ length: Math.min(REGISTER_CHUNK, pools - from) }, (_, i) => JSON.stringify(bigRegistration(from + i)));
      await postAll(home.url, bodies, REGISTER_CONCURRENCY);
    }
    const registerMs = performance.now() - registerStart;
    const homeFull = await memoryOf(home.child.pid!);
    const registrationBytes = Buffer.byteLength(canonicalJson(bigRegistration(0)));
    const transferMs = ((registrationBytes * pools) / RATE_BYTES_PER_S) * 1000;

    logger.info({ transferMs: round(transferMs) }, 'regions (big): a new r2 replica reads r1 across the throttled path');
    const started = performance.now();
    const follower = await startRegionReplica(setup.site('r2'), {
      replicas: { r1: 1, r2: 1 },
      oneWayDelayMs: ONE_WAY_MS,
      holdSecs: 60,
      leaseSecs: LEASE_SECS,
    });
    setup.site('r2').replicas.push(follower);
    const applied = await waitFor(
      () => follower.logs.find((line) => line.msg === 'store snapshot applied' && line.region === 'r1'),
      { timeoutMs: transferMs * 10 + 120_000, intervalMs: 100, message: 'the r2 replica to apply a snapshot of r1' },
    );
    const appliedAt = performance.now();
    await waitFor(async () => (await readRegionView(follower.url, LABEL)).count === pools, { timeoutMs: 60_000, intervalMs: 200, message: 'r2 lists every pool of r1' });
    const listedMs = performance.now() - started;
    const failedReads = follower.logs.filter((line) => line.region === 'r1' && typeof line.level === 'number' && line.level >= 40);
    const followerRead = await memoryOf(follower.child.pid!);
    const list = await getPools(follower.url);
    const followerAfterGet = await memoryOf(follower.child.pid!);
    const readMs = Number(applied.read_ms);
    const applyMs = Number(applied.apply_ms);
    const perPoolKiB = (after: Memory, before: Memory) => round(((after.rssMiB - before.rssMiB) * 1024) / pools);

    const figures: Figure[] = [
      judged({
        id: 'regions.big_read',
        label: `snapshot of ${pools.toLocaleString('en-US')} × 16 KiB registrations read over ${RATE_BYTES_PER_S / 1e6} MB/s, ${ONE_WAY_MS} ms each way`,
        value: readMs,
        unit: 'ms',
        reference: { label: 'target', value: round(transferMs + 2000), unit: 'ms' },
        comparison: 'at-most',
        threshold: 1,
        targetText: `≤ transfer time (${round(transferMs / 1000)} s) + 2 s`,
      }),
      informational({ id: 'regions.big_transfer', label: 'transfer time of the registrations at that rate', value: round(transferMs), unit: 'ms' }),
      informational({ id: 'regions.big_apply', label: 'applying the settled snapshot (what the read had not applied)', value: applyMs, unit: 'ms' }),
      informational({ id: 'regions.big_listed', label: 'new r2 replica started → lists every pool of r1', value: round(listedMs), unit: 'ms' }),
      informational({ id: 'regions.big_failed_reads', label: 'warnings about r1 on the r2 replica (failed reads)', value: failedReads.length, unit: 'lines' }),
      informational({ id: 'regions.big_home_rss', label: 'home (r1) replica RSS with them', value: homeFull.rssMiB, unit: 'MiB' }),
      informational({ id: 'regions.big_home_per_pool', label: 'home replica RSS per pool (over its RSS empty)', value: perPoolKiB(homeFull, homeEmpty), unit: 'KiB' }),
      informational({ id: 'regions.big_follower_rss', label: 'follower (r2) replica RSS with them', value: followerRead.rssMiB, unit: 'MiB' }),
      informational({ id: 'regions.big_follower_per_pool', label: 'follower RSS per pool (over the home replica empty)', value: perPoolKiB(followerRead, homeEmpty), unit: 'KiB' }),
      informational({ id: 'regions.big_follower_peak', label: 'follower peak RSS (VmHWM) after one GET /pools', value: followerAfterGet.hwmMiB, unit: 'MiB' }),
      informational({ id: 'regions.big_get_pools', label: `GET /pools on the follower (${round(list.bytes / 1048576)} MiB)`, value: round(list.ms), unit: 'ms' }),
    ];
    const method =
      `**Big registrations:** r1 (one replica) gets ${pools.toLocaleString('en-US')} registrations of ${registrationBytes.toLocaleString('en-US')} bytes ` +
      `(${CAPABILITIES} capabilities of 510 characters; POSTed ${REGISTER_CONCURRENCY} at a time, lease ${LEASE_SECS} s); then a new r2 replica starts, its path to r1 ` +
      `a proxy carrying ${RATE_BYTES_PER_S / 1e6} MB/s each way with ${ONE_WAY_MS} ms each way, and reads r1 (default 1 s command timeout). The read is its ` +
      `\`store snapshot applied\` line's read_ms, judged against the registrations' bytes at that rate + 2 s. Memory: VmRSS/VmHWM from /proc of each replica ` +
      `process, per pool over the home replica's RSS before any pool; then one GET /pools of the follower.`;
    return {
      figures,
      method,
      details: {
        pools,
        registrationBytes,
        rateBytesPerSecond: RATE_BYTES_PER_S,
        oneWayMs: ONE_WAY_MS,
        registerMs: round(registerMs),
        transferMs: round(transferMs),
        readMs,
        applyMs,
        appliedAfterStartMs: round(appliedAt - started),
        listedMs: round(listedMs),
        failedReads: failedReads.slice(0, 50),
        memory: { homeEmpty, homeFull, followerRead, followerAfterGet },
        getPools: { ms: round(list.ms), bytes: list.bytes },
      },
    };
  } finally {
    await setup.stop();
  }
}
