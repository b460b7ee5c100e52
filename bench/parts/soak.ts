// 6. Soak: does a replica's memory stay flat under hours of ordinary churn? One replica (the real binary,
// with bench/probes/heap-hook.ts preloaded to read its heap) on a private Redis, `poolscope simulate`
// (300 pools, a churn event every 50 ms on average: pools stop and lapse, come back, change capacity,
// lose and regain frontends) and 20 routers following GET /pools/watch. The heap after full collections
// is read every minute; the target compares the end of the run with its first third (minute 10 of 30).
// The /debug histories (at most 50 transitions a pool, docs/contract.md §3) are still filling then: at this
// churn a pool takes about 1.4 transitions a minute. So every sample also counts them (GET /debug/pools),
// and the heap's growth per history entry added tells a bound still filling from a leak.
//   BENCH_SOAK_MINUTES=N      run length (default 30; 3 with BENCH_QUICK=1); the checkpoint is at N / 3
//   BENCH_SOAK_SNAPSHOTS=DIR  also write heap snapshots at the checkpoint and at the end (for a leak hunt)
//   BENCH_SOAK_CHURN_SECS=S   mean time between churn events (default 0.05); e.g. 0.005 fills every
//                             history within minutes, so the checkpoint sees the steady state
import { spawn } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { REPO_ROOT } from '../../test/support/process.js';
import { randomPrefix, startPrivateRedis } from '../../test/support/redis-server.js';
import { stopChild, track } from '../lib/children.js';
import { replicaArgs } from '../lib/replicas.js';
import { startSoakReplica, type HeapReading } from '../lib/soak-replica.js';
import { round } from '../lib/stats.js';
import { informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

const POOLS = 300;
const CHURN_INTERVAL_SECS = Number(process.env.BENCH_SOAK_CHURN_SECS || 0.05);
const WATCHERS = 20;
const SEED = 20261130;
/** The target: heap at the end within this share of the heap at the checkpoint. */
const TOLERANCE = 0.05;
const MiB = 2 ** 20;

interface Sample {
  minute: number;
  heapUsedMiB: number;
  rssMiB: number;
  externalMiB: number;
  /** Transitions the replica's pools hold for /debug (at most 50 a pool, docs/contract.md §3). */
  historyEntries: number;
}

export const soakPart: BenchPart = {
  name: 'soak',
  async run({ sizes, logger }) {
    const minutes = soakMinutes(sizes.quick);
    const checkpoint = minutes / 3;
    const sampleEveryMs = Math.min(60_000, (minutes * 60_000) / 30);
    const snapshotDir = process.env.BENCH_SOAK_SNAPSHOTS;
    const redis = await startPrivateRedis();
    try {
      const replica = await startSoakReplica(replicaArgs({ redisUrl: redis.url, prefix: randomPrefix('bench-soak'), leaseSecs: 15, heartbeatSecs: 5 }));
      const simulate = track(
        spawn(
          process.execPath,
          ['bin/poolscope.js', 'simulate', `--servers=${replica.url}`, `--pools=${POOLS}`, `--churn-interval-secs=${CHURN_INTERVAL_SECS}`, `--seed=${SEED}`],
          { cwd: REPO_ROOT, env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'ignore'] },
        ),
      );
      const watchers = await Promise.all(Array.from({ length: WATCHERS }, () => openWatcher(`${replica.url}/pools/watch`)));
      const samples: Sample[] = [];
      const snapshots: string[] = [];
      try {
        logger.info({ minutes, pools: POOLS, watchers: WATCHERS }, 'soak: churn running');
        const started = performance.now();
        const elapsedMinutes = () => (performance.now() - started) / 60_000;
        const record = (minute: number, heap: HeapReading, historyEntries: number) =>
          samples.push({
            minute: round(minute, 2),
            heapUsedMiB: round(heap.heapUsed / MiB, 2),
            rssMiB: round(heap.rss / MiB, 1),
            externalMiB: round(heap.external / MiB, 2),
            historyEntries,
          });
        let checkpointHeap: Sample | undefined;
        for (let next = sampleEveryMs; ; next += sampleEveryMs) {
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - (performance.now() - started))));
          if (simulate.exitCode !== null) throw new Error(`poolscope simulate exited with ${simulate.exitCode}`);
          const minute = next / 60_000;
          const heap = await replica.measure();
          record(elapsedMinutes(), heap, await historyEntries(replica.url));
          logger.info(samples.at(-1), 'soak: heap after GC');
          const atCheckpoint = checkpointHeap === undefined && minute >= checkpoint - 1e-9;
          const atEnd = minute >= minutes - 1e-9;
          if (atCheckpoint) checkpointHeap = samples.at(-1);
          if (snapshotDir && (atCheckpoint || atEnd)) {
            // Written after the reading, so it does not disturb it; the run goes on without one that failed.
            const path = join(snapshotDir, `soak-${Math.round(minute)}min.heapsnapshot`);
            snapshots.push(await replica.writeSnapshot(path).catch((error: Error) => `${path}: ${error.message}`));
          }
          if (atEnd) break;
        }
        const end = samples.at(-1)!;
        const start = checkpointHeap!;
        const after = samples.filter((s) => s.minute >= start.minute);
        const events = watchers.reduce((sum, w) => sum + w.events, 0);
        const closed = watchers.filter((w) => w.closed).length;
        return {
          part: 'soak',
          title: `Soak (${minutes} min of churn, ${POOLS} pools, ${WATCHERS} watchers)`,
          method:
            `One replica (the binary, lease 15 s, heartbeat 5 s, Redis store) with bench/probes/heap-hook.ts preloaded; ` +
            `\`poolscope simulate --pools ${POOLS} --churn-interval-secs ${CHURN_INTERVAL_SECS}\` against it (a churn event every ` +
            `${CHURN_INTERVAL_SECS * 1000} ms on average) and ${WATCHERS} GET /pools/watch streams read by the benchmark process. ` +
            `Every ${round(sampleEveryMs / 60_000, 2)} min the replica runs four full collections and reports heap used and RSS. ` +
            `Target: heap at minute ${round(minutes, 1)} within ${TOLERANCE * 100} % of heap at minute ${round(checkpoint, 1)}.`,
          figures: [
            judged({
              id: 'soak.heap_growth',
              label: `heap after GC at minute ${round(minutes, 1)}`,
              value: end.heapUsedMiB,
              unit: 'MiB',
              reference: { label: `heap after GC at minute ${round(checkpoint, 1)}`, value: start.heapUsedMiB, unit: 'MiB' },
              comparison: 'at-most',
              threshold: 1 + TOLERANCE,
              targetText: `within ${TOLERANCE * 100} %`,
            }),
            informational({
              id: 'soak.history_entries',
              label: `/debug history entries at minute ${round(minutes, 1)}`,
              value: end.historyEntries,
              unit: 'entries',
              reference: { label: `at minute ${round(checkpoint, 1)} (at most ${POOLS * 50})`, value: start.historyEntries, unit: 'entries' },
            }),
            informational({
              id: 'soak.heap_per_history_entry',
              label: `heap growth per history entry added after minute ${round(checkpoint, 1)}`,
              value: Math.round(((end.heapUsedMiB - start.heapUsedMiB) * MiB) / (end.historyEntries - start.historyEntries)),
              unit: 'B',
            }),
            informational({ id: 'soak.heap_slope', label: `heap slope after minute ${round(checkpoint, 1)}`, value: slopePerMinute(after, 'heapUsedMiB'), unit: 'MiB/min' }),
            informational({
              id: 'soak.rss',
              label: `RSS at minute ${round(minutes, 1)}`,
              value: end.rssMiB,
              unit: 'MiB',
              reference: { label: `RSS at minute ${round(checkpoint, 1)}`, value: start.rssMiB, unit: 'MiB' },
            }),
            informational({ id: 'soak.rss_slope', label: `RSS slope after minute ${round(checkpoint, 1)}`, value: slopePerMinute(after, 'rssMiB'), unit: 'MiB/min' }),
            informational({ id: 'soak.watch_events', label: 'watch events delivered, per watcher', value: Math.round(events / WATCHERS), unit: 'events' }),
          ],
          details: {
            minutes,
            checkpointMinute: checkpoint,
            samples,
            watchStreamsClosedEarly: closed,
            snapshots,
            replicaWarnings: replica.problems().slice(0, 20),
            replicaStderr: replica.stderr(),
          },
        };
      } finally {
        for (const watcher of watchers) watcher.close();
        await stopChild(simulate, { graceMs: 10_000 });
        await replica.stop();
      }
    } finally {
      await redis.stop();
    }
  },
};

/** Every pool's /debug history, counted: what the heap holds that is still filling up to its bound. */
async function historyEntries(url: string): Promise<number> {
  const response = await fetch(`${url}/debug/pools`);
  if (response.status !== 200) throw new Error(`GET ${url}/debug/pools: ${response.status}`);
  const body = (await response.json()) as { pools: { history: unknown[] }[] };
  return body.pools.reduce((sum, pool) => sum + pool.history.length, 0);
}

/** BENCH_SOAK_MINUTES, else 30 (3 for a quick run). */
export function soakMinutes(quick: boolean, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BENCH_SOAK_MINUTES;
  if (raw === undefined || raw === '') return quick ? 3 : 30;
  const minutes = Number(raw);
  if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`BENCH_SOAK_MINUTES: must be a positive number of minutes, not ${raw}`);
  return minutes;
}

/** Least-squares slope of `field` over the samples' minutes. */
function slopePerMinute(samples: readonly Sample[], field: 'heapUsedMiB' | 'rssMiB'): number {
  if (samples.length < 2) return Number.NaN;
  const n = samples.length;
  const meanX = samples.reduce((s, p) => s + p.minute, 0) / n;
  const meanY = samples.reduce((s, p) => s + p[field], 0) / n;
  let num = 0;
  let den = 0;
  for (const p of samples) {
    num += (p.minute - meanX) * (p[field] - meanY);
    den += (p.minute - meanX) ** 2;
  }
  return round(num / den, 3);
}

interface Watcher {
  events: number;
  closed: boolean;
  close(): void;
}

/** A router following the watch stream: counts events, keeps nothing. */
function openWatcher(url: string): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    let closing = false;
    const request = http.get(url, { headers: { accept: 'text/event-stream' } });
    const watcher: Watcher = {
      events: 0,
      closed: false,
      close() {
        closing = true;
        request.destroy();
      },
    };
    request.once('error', (error) => (closing ? undefined : reject(error)));
    request.once('response', (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`GET ${url}: ${response.statusCode}`));
        return;
      }
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        for (let i = chunk.indexOf('\n\n'); i >= 0; i = chunk.indexOf('\n\n', i + 2)) watcher.events += 1;
      });
      response.on('error', () => {});
      response.once('close', () => {
        if (!closing) watcher.closed = true;
      });
      resolve(watcher);
    });
  });
}
