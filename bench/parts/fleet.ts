// A fleet's day: 20,000 pools heartbeating every 5 s over two replicas on one Redis (4,000 heartbeats a
// second, each pool to one replica), 500 watch streams on each replica, 10 pool changes a second (POSTs
// alternating between the replicas, each timed until every stream on both replicas has it), and 50
// routers polling GET /pools with If-None-Match (and gzip) every second, for BENCH_FLEET_MINUTES (5 in a
// full run). Per replica: CPU (share of one core), event-loop delay p50/p99/max, heartbeat latency p99,
// RSS; for the fleet: change → every watcher p99 and every 5xx. Targets: event-loop delay p99 ≤ 10 ms,
// change → every watcher p99 ≤ 50 ms, no 5xx.
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { randomPrefix, startPrivateRedis } from '../../test/support/redis-server.js';
import { writeLeases } from '../lib/bulk-leases.js';
import { ChangeWatchers } from '../lib/change-watchers.js';
import { cpuSeconds, machineCpuSeconds, rssBytes } from '../lib/cpu.js';
import { startHeartbeatLoad, type TargetReport } from '../lib/heartbeats.js';
import { postPool, waitForPools } from '../lib/http.js';
import { gcShown, type LoopDelay } from '../lib/loop-delay.js';
import { benchRegistration, replicaArgs } from '../lib/replicas.js';
import { startSoakReplica, type SoakReplica } from '../lib/soak-replica.js';
import { round, roundAll, summarize } from '../lib/stats.js';
import { checked, informational, judged, type Figure } from '../report/types.js';
import type { BenchPart } from './part.js';

const LEASE_SECS = 15;
const HEARTBEAT_SECS = 5;
/** Pools whose content the changes rotate through (each changed every CHANGE_POOLS / rate seconds: within its lease). */
const CHANGE_POOLS = 50;
const LOOP_P99_TARGET_MS = 10;
const CHANGE_P99_TARGET_MS = 50;
const MiB = 2 ** 20;
const NAMES = ['A', 'B'] as const;
/** How long the changes still under way at the window's end may take to arrive (then they count as missed). */
const SETTLE_MS = 10_000;

interface RouterCounts {
  ok: number;
  notModified: number;
  status5xx: number;
  other: number;
  errors: number;
}

export const fleetPart: BenchPart = {
  name: 'fleet',
  async run({ sizes, logger }) {
    const { pools, watchersPerReplica, routers, changesPerSec, durationSecs, warmupSecs } = sizes.fleet;
    const redis = await startPrivateRedis();
    const prefix = randomPrefix('bench-fleet');
    const replicas: SoakReplica[] = [];
    const watchers: ChangeWatchers[] = [];
    let load: Awaited<ReturnType<typeof startHeartbeatLoad>> | undefined;
    let stopRouters = true;
    try {
      const registrations = Array.from({ length: pools }, (_, i) => benchRegistration('fleet', i));
      logger.info({ pools }, 'fleet: writing leases, starting two replicas');
      // Written with a long lease; the heartbeats renew them with the replicas' own.
      await writeLeases({ redisUrl: redis.url, prefix, leaseSecs: 120, registrations });
      for (const _ of NAMES) replicas.push(await startSoakReplica(replicaArgs({ redisUrl: redis.url, prefix, leaseSecs: LEASE_SECS, heartbeatSecs: HEARTBEAT_SECS })));
      for (const replica of replicas) await waitForPools(replica.url, pools, 120_000);
      load = await startHeartbeatLoad({
        targets: replicas.map((replica, r) => ({ url: replica.url, bodies: registrations.filter((_, i) => i % 2 === r).map((body) => JSON.stringify(body)) })),
        intervalMs: HEARTBEAT_SECS * 1000,
      });
      // The pools the changes rotate through, registered before the streams open.
      let changeId = 0;
      const changeBody = (id: number) => JSON.stringify(benchRegistration('change', id % CHANGE_POOLS, { capacity: [{ name: 'change', value: id }] }));
      for (let k = 0; k < CHANGE_POOLS; k += 1) await postPool(replicas[k % 2]!.url, changeBody(changeId++));
      await waitForPools(replicas[1]!.url, pools + CHANGE_POOLS, 30_000);

      logger.info({ watchersPerReplica, routers }, 'fleet: watch streams and routers');
      for (const replica of replicas) {
        const clients = new ChangeWatchers();
        await clients.open(Number(new URL(replica.url).port), watchersPerReplica, await revisionOf(replica.url));
        watchers.push(clients);
      }
      const routerCounts: RouterCounts = { ok: 0, notModified: 0, status5xx: 0, other: 0, errors: 0 };
      stopRouters = false;
      const routerLoops = Array.from({ length: routers }, (_, i) => pollAsRouter(replicas[i % 2]!.url, i / routers, routerCounts, () => stopRouters));

      logger.info({ warmupSecs }, 'fleet: warm-up (heartbeats and routers)');
      await sleep(warmupSecs * 1000);
      Object.assign(routerCounts, { ok: 0, notModified: 0, status5xx: 0, other: 0, errors: 0 });
      await load.report(true);
      await Promise.all(replicas.map((replica) => replica.loopDelay(true)));
      const cpuBefore = replicas.map((replica) => cpuSeconds(replica.pid));
      // What the load itself costs, and how busy the whole machine is: on two shared cores the load
      // process and this one (watch streams, routers, changes) compete with the replicas and Redis.
      const loadCpuBefore = cpuSeconds(load.pid);
      const benchCpuBefore = process.cpuUsage();
      const machineBefore = machineCpuSeconds();
      const rssMax = replicas.map(() => 0);
      const sampleRss = () => replicas.forEach((replica, r) => (rssMax[r] = Math.max(rssMax[r]!, rssBytes(replica.pid))));

      logger.info({ durationSecs, changesPerSec }, 'fleet: measured window');
      const sent = new Map<number, number>();
      let changeFailures = 0;
      const started = performance.now();
      const changes: Promise<void>[] = [];
      let nextRss = started;
      for (let tick = 0; performance.now() - started < durationSecs * 1000; tick += 1) {
        const id = changeId++;
        const replica = replicas[id % 2]!;
        sent.set(id, performance.now());
        changes.push(postPool(replica.url, changeBody(id)).catch(() => void (changeFailures += 1)));
        if (performance.now() >= nextRss) {
          sampleRss();
          nextRss += 5000;
        }
        // On the schedule, not after the answer: a slow replica gets the same rate.
        const due = started + ((tick + 1) * 1000) / changesPerSec;
        await sleep(Math.max(0, due - performance.now()));
      }
      // The window's figures first, at its end; then the last changes are given a bounded time to arrive.
      const windowSecs = (performance.now() - started) / 1000;
      const cpu = replicas.map((replica, r) => (cpuSeconds(replica.pid) - cpuBefore[r]!) / windowSecs);
      const loadCpu = (cpuSeconds(load.pid) - loadCpuBefore) / windowSecs;
      const benchUsage = process.cpuUsage(benchCpuBefore);
      const benchCpu = (benchUsage.user + benchUsage.system) / 1e6 / windowSecs;
      const machineAfter = machineCpuSeconds();
      const machineBusy = (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total);
      sampleRss();
      const delays: LoopDelay[] = await Promise.all(replicas.map((replica) => replica.loopDelay(false)));
      const heartbeats = await load.report(false);
      stopRouters = true;
      await Promise.race([Promise.all(changes), sleep(SETTLE_MS)]);
      await sleep(1000);
      await Promise.race([Promise.all(routerLoops), sleep(SETTLE_MS)]);

      const fanOut: number[] = [];
      let missed = 0;
      for (const [id, at] of sent) {
        const done = watchers.map((clients) => clients.doneAt(id));
        if (done.some((t) => t === undefined)) missed += 1;
        else fanOut.push(Math.max(...(done as number[])) - at);
      }
      const change = summarize(fanOut);
      const status5xx = heartbeats.reduce((sum, report) => sum + report.status5xx, 0) + routerCounts.status5xx;
      const figures: Figure[] = [];
      replicas.forEach((_, r) => {
        const name = NAMES[r]!;
        const delay = delays[r]!;
        const heartbeat = heartbeats[r]!;
        figures.push(
          judged({
            id: `fleet.${name}.loop_p99`,
            label: `replica ${name}: event-loop delay p99 (p50 ${delay.p50} ms, max ${delay.max} ms)`,
            value: delay.p99,
            unit: 'ms',
            reference: { label: 'target', value: LOOP_P99_TARGET_MS, unit: 'ms' },
            comparison: 'at-most',
            threshold: 1,
            targetText: `≤ ${LOOP_P99_TARGET_MS} ms`,
          }),
          informational({ id: `fleet.${name}.loop_max`, label: `replica ${name}: event-loop delay max`, value: delay.max, unit: 'ms' }),
          informational({ id: `fleet.${name}.gc_max`, label: `replica ${name}: longest garbage-collection pause (${gcShown(delay)})`, value: delay.gc.max, unit: 'ms' }),
          informational({ id: `fleet.${name}.cpu`, label: `replica ${name}: CPU, share of one core`, value: cpu[r]! * 100, unit: '%' }),
          informational({ id: `fleet.${name}.heartbeat_p99`, label: `replica ${name}: heartbeat latency p99 (${heartbeat.ok.toLocaleString('en-US')} answered)`, value: heartbeat.latency.p99, unit: 'ms' }),
          informational({ id: `fleet.${name}.rss`, label: `replica ${name}: RSS, largest sample`, value: rssMax[r]! / MiB, unit: 'MiB' }),
        );
      });
      figures.push(
        judged({
          id: 'fleet.change_watchers_p99',
          label: `change → every watcher of both replicas, p99 (${fanOut.length} changes${missed ? `, ${missed} not seen by every stream` : ''})`,
          value: missed > 0 ? Number.POSITIVE_INFINITY : change.p99,
          unit: 'ms',
          reference: { label: 'target', value: CHANGE_P99_TARGET_MS, unit: 'ms' },
          comparison: 'at-most',
          threshold: 1,
          targetText: `≤ ${CHANGE_P99_TARGET_MS} ms, every change to every stream`,
        }),
        informational({ id: 'fleet.change_watchers_p50', label: 'change → every watcher, p50', value: change.p50, unit: 'ms' }),
        informational({ id: 'fleet.load_cpu', label: 'the heartbeat load process: CPU, share of one core', value: loadCpu * 100, unit: '%' }),
        informational({ id: 'fleet.bench_cpu', label: 'the bench process (watch streams, routers, changes): CPU, share of one core', value: benchCpu * 100, unit: '%' }),
        informational({ id: 'fleet.machine_busy', label: `the whole machine: CPU busy, share of its ${availableParallelism()} cores`, value: machineBusy * 100, unit: '%' }),
        checked({
          id: 'fleet.status_5xx',
          label: 'answers 5xx (heartbeats and router polls), and failed requests',
          value: status5xx,
          unit: '',
          shown: `${status5xx} 5xx; ${heartbeats.reduce((sum, report) => sum + report.errors, 0) + routerCounts.errors + changeFailures} failed requests`,
          targetText: 'no 5xx',
          met: status5xx === 0,
        }),
      );
      return {
        part: 'fleet',
        title: `Fleet: ${pools.toLocaleString('en-US')} pools, two replicas`,
        method:
          `${pools} leases written to one private Redis, two replicas (the binary, lease ${LEASE_SECS} s) listing them; a load process ` +
          `POSTing every pool's registration every ${HEARTBEAT_SECS} s, spread evenly over the interval (half the pools to each ` +
          `replica: ${round(pools / HEARTBEAT_SECS)} heartbeats a second, renewals); ${watchersPerReplica} watch streams on each replica ` +
          `(resumed with Last-Event-ID, plain sockets); ${routers} routers, half on each replica, each GET /pools with ` +
          `If-None-Match and Accept-Encoding: gzip once a second; ${changesPerSec} changes a second (a capacity entry of one of ` +
          `${CHANGE_POOLS} pools, POSTed to A and B in turn), each timed from its POST until every stream of both replicas had it. ` +
          `After a ${warmupSecs} s warm-up, a ${round(windowSecs, 1)} s window: each replica's CPU (/proc), event-loop delay (a 1 ms ` +
          `timer preloaded into it, bench/probes/loop-delay-hook.mjs), RSS sampled every 5 s; the heartbeats' latency in the load process; the CPU of the load process and of this one (/proc, process.cpuUsage) and the whole machine's busy share (/proc/stat), so a load that could not keep up is seen as such.`,
        figures,
        details: {
          windowSecs: round(windowSecs, 1),
          replicas: replicas.map((_, r) => ({
            name: NAMES[r],
            cpuShareOfOneCore: round(cpu[r]!, 3),
            loopDelay: delays[r],
            heartbeats: heartbeats[r] satisfies TargetReport | undefined,
            rssMaxMiB: round(rssMax[r]! / MiB, 1),
            watchersClosedEarly: watchers[r]?.closedEarly,
            problems: replicas[r]!.problems().slice(0, 20),
          })),
          changes: { sent: sent.size, missed, failed: changeFailures, latency: roundAll(change) },
          cpu: { loadShareOfOneCore: round(loadCpu, 3), benchShareOfOneCore: round(benchCpu, 3), machineBusyShare: round(machineBusy, 3) },
          routers: routerCounts,
        },
      };
    } finally {
      stopRouters = true;
      for (const clients of watchers) clients.close();
      await load?.stop();
      for (const replica of replicas) await replica.stop();
      await redis.stop();
    }
  },
};

/** The revision of the replica's list now, from its ETag (`"<revision>.<digest>"`). */
async function revisionOf(url: string): Promise<string> {
  const response = await fetch(`${url}/pools`, { headers: { 'accept-encoding': 'gzip' } });
  await response.arrayBuffer();
  const revision = /^"([^.]+)\./.exec(response.headers.get('etag') ?? '')?.[1];
  if (!revision) throw new Error(`no revision in the ETag of ${url}/pools`);
  return revision;
}

/** A router: GET /pools with the ETag it holds, gzip, once a second (started `phase` of a second in). */
async function pollAsRouter(url: string, phase: number, counts: RouterCounts, stopped: () => boolean): Promise<void> {
  let etag: string | undefined;
  await sleep(phase * 1000);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    while (!stopped()) {
      const started = performance.now();
      const { status, tag } = await new Promise<{ status: number; tag: string | undefined }>((resolve) => {
        const headers: Record<string, string> = { 'accept-encoding': 'gzip', ...(etag ? { 'if-none-match': etag } : {}) };
        const request = http.get(`${url}/pools`, { headers, agent }, (response) => {
          response.resume();
          response.once('end', () => resolve({ status: response.statusCode ?? 0, tag: response.headers.etag }));
        });
        request.once('error', () => resolve({ status: 0, tag: undefined }));
      });
      if (status === 200) {
        counts.ok += 1;
        etag = tag;
      } else if (status === 304) counts.notModified += 1;
      else if (status >= 500) counts.status5xx += 1;
      else if (status === 0) counts.errors += 1;
      else counts.other += 1;
      await sleep(Math.max(0, 1000 - (performance.now() - started)));
    }
  } finally {
    agent.destroy();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
