// 5. Regions (docs/contract.md §7): three regions on this machine, each with its own redis-server and its
// own replicas (real `poolscope serve --region … --regions-file …` processes); every follower connection
// to a remote region's Redis goes through a TCP proxy that adds ONE_WAY_MS each way (one proxy per
// (replica region, remote region) pair, in a process of its own: bench/lib/regions.ts, wan.ts). Three figures:
//   1. a POST in r1 → its `upsert` on an r2 replica's watch stream (the follow is a push: XREAD BLOCK on the
//      change log). Target: p99 ≤ one-way delay + 20 ms. A tap in front of r2's proxy to r1 times the
//      follower's commands, so the report says where the time goes.
//   2. a cut noticed: the r2 → r1 path held (every byte kept, sockets open: a half-open partition); time
//      until r2's replica reports r1 `complete: false`. Target: ≤ command timeout (1000 ms, the default) + 250 ms.
//   3. pools registered in r3; r3 cut from the r1 and r2 replicas until they report it `dropped: true`
//      (--region-hold-secs HOLD_SECS), then released: time until every r1 and r2 replica lists all of them
//      again. Target: ≤ 2 s.
import { postAll, postPool } from '../lib/http.js';
import { startRegions, pingRoundTrips, readRegionView, type RegionView, type RegionsSetup } from '../lib/regions.js';
import { benchRegistration } from '../lib/replicas.js';
import type { TappedCommand } from '../lib/resp-tap.js';
import { round, roundAll, summarize } from '../lib/stats.js';
import { TimedSse, type TimedEvent } from '../lib/timed-sse.js';
import type { PoolscopeProcess } from '../../test/support/process.js';
import { waitFor } from '../../test/support/wait.js';
import { blockWindowMs } from '../../src/store/redis/follow-changes.js';
import { informational, judged } from '../report/types.js';
import type { PartResult } from '../report/types.js';
import type { BenchPart, PartContext } from './part.js';
import { measureBigFollow } from './regions-big.js';

const ONE_WAY_MS = 150;
/** The replicas' --redis-command-timeout-ms default, which every region's command_timeout_ms takes here. */
const COMMAND_TIMEOUT_MS = 1000;
const HOLD_SECS = 2;
/** Long enough that no pool lapses during the part. */
const LEASE_SECS = 300;
/** r1: the region POSTed to (a second replica follows the others like any replica); r2: the one watched. */
const REPLICAS = { r1: 2, r2: 1, r3: 1 };
/** Pools the follow POSTs rotate through; the first round registers them, unmeasured. */
const FOLLOW_POOLS = 10;
/** Each POST waits a random 0..this first, so it lands at any point of the follower's read/XREAD cycle. */
const FOLLOW_JITTER_MS = 1000;
const EVENT_TIMEOUT_MS = 10_000;
const PINGS = 20;
const CUT_POLL_MS = 10;
const CUT_TIMEOUT_MS = 10_000;
const REGISTER_CONCURRENCY = 50;
const LISTED_POLL_MS = 20;
const DROPPED_POLL_MS = 200;
/** How long a region must have been complete before a cut (see steady()). */
const STEADY_MS = 2000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const epochOf = (at: number) => performance.timeOrigin + at;
const n = (value: number) => value.toLocaleString('en-US');
/** The follower's XREAD BLOCK window at this command timeout, as the source the replicas were built from says. */
const BLOCK_WINDOW_MS = blockWindowMs(COMMAND_TIMEOUT_MS);

export const regionsPart: BenchPart = {
  name: 'regions',
  async run({ sizes, logger }) {
    const { bigPools } = sizes.regions;
    // BENCH_REGIONS_ONLY=big: the big-registration follow alone (bench/parts/regions-big.ts).
    if (process.env.BENCH_REGIONS_ONLY === 'big') {
      const big = await measureBigFollow(bigPools, logger);
      return { part: 'regions', title: 'Regions: big registrations over a slow WAN', method: big.method, figures: big.figures, details: { big: big.details } };
    }
    return withBigFollow(await threeRegions(sizes, logger), bigPools, logger);
  },
};

async function threeRegions(sizes: PartContext['sizes'], logger: PartContext['logger']): Promise<Omit<PartResult, 'durationMs' | 'loadAverageAtStart'>> {
  {
    const { follows, cuts, pools, rounds } = sizes.regions;
    logger.info({ regions: REPLICAS, oneWayMs: ONE_WAY_MS }, 'regions: three regions, WAN proxies between them');
    const setup = await startRegions({
      replicas: REPLICAS,
      oneWayDelayMs: ONE_WAY_MS,
      holdSecs: HOLD_SECS,
      leaseSecs: LEASE_SECS,
      tap: { from: 'r2', to: 'r1' },
    });
    try {
      const follow = await measureFollow(setup, follows, logger);
      const cut = await measureCuts(setup, cuts, logger);
      const drop = await measureDropAndReturn(setup, pools, rounds, logger);
      // The cuts log warnings on purpose; what else went wrong shows among them (the first 200 are kept).
      const warnings = setup.sites.flatMap((site) => site.replicas.flatMap((r) => problems(r, site.name)));

      const followTarget = ONE_WAY_MS + 20;
      const cutTarget = COMMAND_TIMEOUT_MS + 250;
      return {
        part: 'regions',
        title: 'Regions (three regions, 150 ms each way between them)',
        method:
          `Three regions (r1, r2, r3) on this machine, each with its own redis-server and its own replicas (${REPLICAS.r1}, ${REPLICAS.r2} and ${REPLICAS.r3}; the binary, ` +
          `\`poolscope serve --region … --regions-file … --region-hold-secs ${HOLD_SECS}\`, lease ${LEASE_SECS} s, command timeout ${COMMAND_TIMEOUT_MS} ms: the default). ` +
          `Every follower connection to a remote region's Redis goes through a TCP proxy adding ${ONE_WAY_MS} ms each way (test/support/tcp-proxy.ts), one proxy per ` +
          `(replica region, remote region) pair, in a process of its own so the load of this one never delays a path; so each region's replicas have a regions file of ` +
          `their own (the same regions and stores, the remote ones at their proxies). Each region's Redis got its epoch from a replica started and stopped before ` +
          `the measured ones, as in a deployment whose regions have all been up. ` +
          `**Follow:** ${n(follows)} POSTs to an r1 replica, each changing one of ${FOLLOW_POOLS} registrations after a random 0–${FOLLOW_JITTER_MS} ms pause ` +
          `(so it lands anywhere in the follower's cycle), timed from just before the POST to its upsert on the r2 replica's GET /pools/watch. A tap (a relay ` +
          `adding no delay) between the r2 replica and its proxy to r1 timestamps the follower's commands as the replica sees them: the XREAD (BLOCK window ` +
          `${BLOCK_WINDOW_MS} ms at this command timeout) whose reply brings the change, or only announces it and a read of the entries follows. ` +
          `One-way delay: ${PINGS} PINGs through that proxy, half the round trip. ` +
          `**Cut:** ${n(cuts)} holds of the r2 → r1 proxy (bytes kept, sockets open: a half-open partition), each once r1 had been complete on the r2 replica ` +
          `for ${STEADY_MS / 1000} s plus a random 0–0.5 s, timed until its GET /pools (polled every ${CUT_POLL_MS} ms) says r1 \`complete: false\`. ` +
          `**Drop and return:** ${n(pools)} pools POSTed to the r3 replica, ${REGISTER_CONCURRENCY} at a time; then ${n(rounds)} round${rounds === 1 ? '' : 's'} of holding ` +
          `the r1 → r3 and r2 → r3 proxies until every r1 and r2 replica says r3 \`dropped: true\` (GET /pools every ${DROPPED_POLL_MS} ms), then releasing both, ` +
          `timed from the release until each of those replicas' GET /pools (polled every ${LISTED_POLL_MS} ms) lists all ${n(pools)} again. The snapshot ` +
          `figures come from each replica's \`store snapshot applied\` log line (read_ms, apply_ms).`,
        figures: [
          judged({
            id: 'regions.follow_p99',
            label: 'POST in r1 → upsert on an r2 watcher, p99',
            value: follow.latency.p99,
            unit: 'ms',
            reference: { label: 'target', value: followTarget, unit: 'ms' },
            comparison: 'at-most',
            threshold: 1,
            targetText: `≤ ${ONE_WAY_MS} ms one way + 20 ms`,
          }),
          informational({ id: 'regions.follow_p50', label: 'POST in r1 → upsert on an r2 watcher, p50', value: follow.latency.p50, unit: 'ms' }),
          informational({ id: 'regions.follow_max', label: 'POST in r1 → upsert on an r2 watcher, max', value: follow.latency.max, unit: 'ms' }),
          informational({ id: 'regions.one_way', label: 'one-way delay of the proxy (PING round trip / 2), p50', value: follow.oneWay.p50, unit: 'ms' }),
          informational({ id: 'regions.post_p50', label: 'the POST in r1 alone (round trip), p50', value: follow.post.p50, unit: 'ms' }),
          informational({ id: 'regions.follow_reach_p50', label: 'of which: POST → the reply with the change reaches the r2 follower, p50', value: follow.breakdown.toFollower.p50, unit: 'ms' }),
          informational({ id: 'regions.follow_reach_p99', label: 'of which: POST → the reply with the change reaches the r2 follower, p99', value: follow.breakdown.toFollower.p99, unit: 'ms' }),
          informational({
            id: 'regions.follow_xread_wait_p99',
            label: `of which: the change waiting at r1's Redis for the follower's next XREAD (between two BLOCK windows of ${BLOCK_WINDOW_MS} ms), p99`,
            value: follow.breakdown.waitedForXread.p99,
            unit: 'ms',
          }),
          informational({
            id: 'regions.follow_xread_absent',
            label: 'follows whose change found no XREAD waiting at Redis',
            value: follow.breakdown.noXreadWaiting,
            unit: 'follows',
            reference: { label: 'follows measured', value: follows, unit: 'follows' },
          }),
          informational({ id: 'regions.follow_second_read_p50', label: 'of which: a second round trip to read the entries (0 when the XREAD reply carries them), p50', value: follow.breakdown.secondRead.p50, unit: 'ms' }),
          informational({ id: 'regions.follow_apply_p50', label: 'of which: that reply → upsert on the watcher, p50', value: follow.breakdown.toWatcher.p50, unit: 'ms' }),
          judged({
            id: 'regions.cut_max',
            label: 'r2 → r1 path held → r2 reports r1 incomplete, max',
            value: cut.noticed.max,
            unit: 'ms',
            reference: { label: 'target', value: cutTarget, unit: 'ms' },
            comparison: 'at-most',
            threshold: 1,
            targetText: `≤ command timeout ${COMMAND_TIMEOUT_MS} ms + 250 ms`,
          }),
          informational({ id: 'regions.cut_p50', label: 'r2 → r1 path held → r2 reports r1 incomplete, p50', value: cut.noticed.p50, unit: 'ms' }),
          informational({ id: 'regions.cut_return_p50', label: 'r2 → r1 path released → r2 reports r1 complete, p50', value: cut.returned.p50, unit: 'ms' }),
          judged({
            id: 'regions.return_max',
            label: `r3 released after dropped → every r1/r2 replica lists its ${n(pools)} pools, max`,
            value: drop.listed.max,
            unit: 'ms',
            reference: { label: 'target', value: 2000, unit: 'ms' },
            comparison: 'at-most',
            threshold: 1,
            targetText: '≤ 2 s',
          }),
          informational({ id: 'regions.return_p50', label: `r3 released → an r1/r2 replica lists its ${n(pools)} pools, p50`, value: drop.listed.p50, unit: 'ms' }),
          informational({
            id: 'regions.return_resumed',
            label: `returns where r3's log was resumed where it was left (the rest read a snapshot of r3), of ${drop.listed.count}`,
            value: drop.resume.count,
            unit: '',
          }),
          informational({ id: 'regions.return_resume_waited_p50', label: "of which: release → the resume of r3's log starts (reconnecting, its ready check, the backoff), p50", value: drop.resumeWaited.p50, unit: 'ms' }),
          informational({
            id: 'regions.return_resume_p50',
            label: "of which: the resume (the log's first read beside a due read, across the proxy; the dropped pools put back), p50",
            value: drop.resume.p50,
            unit: 'ms',
          }),
          informational({ id: 'regions.return_waited_p50', label: 'of which: release → the snapshot read of r3 starts, p50', value: drop.waited.p50, unit: 'ms' }),
          informational({ id: 'regions.return_read_p50', label: `of which: the snapshot read of r3 (${n(pools)} pools, across the proxy; reconnecting included; its leases applied as they arrive), p50`, value: drop.read.p50, unit: 'ms' }),
          informational({ id: 'regions.return_apply_p50', label: 'of which: applying the settled snapshot (what the read had not applied), p50', value: drop.apply.p50, unit: 'ms' }),
          informational({ id: 'regions.dropped_p50', label: `r3 held → an r1/r2 replica reports it dropped (hold ${HOLD_SECS} s), p50`, value: drop.dropped.p50, unit: 'ms' }),
          informational({ id: 'regions.first_follow', label: `${n(pools)} POSTs in r3 done → listed on every r1/r2 replica`, value: drop.firstFollowMs, unit: 'ms' }),
        ],
        details: {
          oneWayDelayMs: ONE_WAY_MS,
          commandTimeoutMs: COMMAND_TIMEOUT_MS,
          regionHoldSecs: HOLD_SECS,
          replicas: REPLICAS,
          follow: {
            latencyMs: roundAll(follow.latency),
            postRoundTripMs: roundAll(follow.post),
            pingRoundTripMs: roundAll(follow.ping),
            oneWayMs: roundAll(follow.oneWay),
            missed: follow.missed,
            breakdownMs: {
              postToFollower: roundAll(follow.breakdown.toFollower),
              waitedForXread: roundAll(follow.breakdown.waitedForXread),
              secondRead: roundAll(follow.breakdown.secondRead),
              replyToWatcher: roundAll(follow.breakdown.toWatcher),
            },
            /** Follows whose change found no XREAD waiting at Redis (it fell between two BLOCK windows). */
            noXreadWaiting: follow.breakdown.noXreadWaiting,
            /** Follows whose entries came by a read after the XREAD (a follower that uses the XREAD as a wake-up only). */
            withSecondRead: follow.breakdown.withSecondRead,
            blockWindowMs: BLOCK_WINDOW_MS,
          },
          cut: { noticedMs: roundAll(cut.noticed), returnedMs: roundAll(cut.returned), samples: cut.samples },
          dropAndReturn: {
            pools,
            registerMs: round(drop.registerMs),
            firstFollowMs: round(drop.firstFollowMs),
            listedMs: roundAll(drop.listed),
            completeMs: roundAll(drop.complete),
            droppedMs: roundAll(drop.dropped),
            snapshotWaitMs: roundAll(drop.waited),
            snapshotReadMs: roundAll(drop.read),
            snapshotApplyMs: roundAll(drop.apply),
            resumeWaitMs: roundAll(drop.resumeWaited),
            resumeMs: roundAll(drop.resume),
            samples: drop.samples,
          },
          replicaWarningCount: warnings.length,
          replicaWarnings: warnings.slice(0, 200),
        },
      };
    } finally {
      await setup.stop();
    }
  }
}

/** The three figures above, then the big-registration follow on regions of its own. */
async function withBigFollow(result: Omit<PartResult, 'durationMs' | 'loadAverageAtStart'>, bigPools: number, logger: PartContext['logger']) {
  const big = await measureBigFollow(bigPools, logger);
  return { ...result, method: `${result.method} ${big.method}`, figures: [...result.figures, ...big.figures], details: { ...result.details, big: big.details } };
}

// ---- 1. follow ----

async function measureFollow(setup: RegionsSetup, count: number, logger: PartContext['logger']) {
  const poster = setup.site('r1').replicas[0]!;
  const watched = setup.site('r2').replicas[0]!;
  const tap = setup.tap!;
  const ping = summarize(await pingRoundTrips(setup.site('r2').proxies.get('r1')!.port, PINGS));
  const oneWay = { ...ping, p50: ping.p50 / 2, p99: ping.p99 / 2, max: ping.max / 2, mean: ping.mean / 2 };
  const watch = await TimedSse.open(`${watched.url}/pools/watch`);
  const samples: number[] = [];
  const postMs: number[] = [];
  const toFollower: number[] = [];
  const waitedForXread: number[] = [];
  const secondRead: number[] = [];
  const toWatcher: number[] = [];
  let noXreadWaiting = 0;
  let withSecondRead = 0;
  let missed = 0;
  try {
    logger.info({ follows: count }, 'regions: POST in r1 → upsert on an r2 watcher');
    for (let i = 0; i < FOLLOW_POOLS + count; i += 1) {
      const record = i >= FOLLOW_POOLS;
      const body = benchRegistration('follow', i % FOLLOW_POOLS, { capacity: [{ name: 'gpus', value: 1000 + i }] });
      await pause(Math.random() * FOLLOW_JITTER_MS);
      await tap.clear();
      const arrived = watch.next((event) => isUpsertOf(event, body), EVENT_TIMEOUT_MS);
      const start = performance.now();
      await postPool(poster.url, JSON.stringify(body));
      const posted = performance.now();
      let event: TimedEvent;
      try {
        event = await arrived;
      } catch {
        if (record) {
          missed += 1;
          samples.push(Number.POSITIVE_INFINITY);
        }
        continue;
      }
      if (!record) continue;
      samples.push(event.at - start);
      postMs.push(posted - start);
      const parts = breakdown(await tap.commands(), start, event.at);
      if (parts.carrier === undefined) continue;
      const reached = parts.wake ?? parts.carrier;
      toFollower.push(reached.repliedAt - start);
      toWatcher.push(event.at - parts.carrier.repliedAt);
      secondRead.push(parts.second ? parts.second.repliedAt - parts.wake!.repliedAt : 0);
      if (parts.second) withSecondRead += 1;
      if (parts.wake) {
        // The entry was logged about halfway through the POST; the XREAD reached Redis one way after it left.
        const waited = parts.wake.sentAt + oneWay.p50 - (start + (posted - start) / 2);
        waitedForXread.push(Math.max(0, waited));
        if (waited > 0) noXreadWaiting += 1;
      }
    }
  } finally {
    watch.close();
  }
  return {
    latency: summarize(samples),
    post: summarize(postMs),
    ping,
    oneWay,
    missed,
    breakdown: {
      toFollower: summarize(toFollower),
      waitedForXread: summarize(waitedForXread),
      secondRead: summarize(secondRead),
      toWatcher: summarize(toWatcher),
      noXreadWaiting,
      withSecondRead,
    },
  };
}

/**
 * The follower's commands behind one upsert: the first XREAD reply with entries (it carries them, or, in
 * a follower that uses it only as a wake-up, announces them), the read of the change log after it that
 * brought them if there was one (a second round trip), and the reply the entry came in.
 */
function breakdown(commands: TappedCommand[], start: number, upsertAt: number) {
  const within = commands.filter((c) => c.repliedAt >= start && c.repliedAt <= upsertAt);
  const wake = within.find((c) => c.command === 'xread' && !c.nil);
  const reads = within.filter((c) => c.command === 'read-changes');
  const second = wake ? reads.filter((c) => c.sentAt >= wake.repliedAt).at(-1) : undefined;
  return { wake, second, carrier: second ?? wake ?? reads.at(-1) };
}

function isUpsertOf(event: TimedEvent, body: Record<string, unknown>): boolean {
  if (event.event !== 'upsert') return false;
  const { pool } = event.data as { pool: Record<string, unknown> };
  return pool.cluster_id === body.cluster_id && pool.name === body.name && JSON.stringify(pool.capacity) === JSON.stringify(body.capacity);
}

// ---- 2. a cut noticed ----

async function measureCuts(setup: RegionsSetup, count: number, logger: PartContext['logger']) {
  const proxy = setup.site('r2').proxies.get('r1')!;
  const replica = setup.site('r2').replicas[0]!;
  const noticed: number[] = [];
  const returned: number[] = [];
  const samples: { noticedMs: number; returnedMs: number; reason: string | undefined }[] = [];
  logger.info({ cuts: count }, 'regions: r2 → r1 path held until r2 reports r1 incomplete');
  for (let i = 0; i < count; i += 1) {
    await steady([replica], 'r1');
    const heldAt = await proxy.hold();
    let entry: RegionView['regions'][number] | undefined;
    let noticedAt: number;
    let releasedAt: number;
    try {
      entry = await pollUntil(replica, CUT_POLL_MS, CUT_TIMEOUT_MS, (view) => {
        const r1 = view.regions.find((r) => r.name === 'r1');
        return r1 && !r1.complete ? r1 : undefined;
      });
      noticedAt = performance.now();
    } finally {
      releasedAt = await proxy.release();
    }
    await pollUntil(replica, CUT_POLL_MS, 30_000, (view) => view.regions.find((r) => r.name === 'r1')?.complete === true || undefined);
    const returnedAt = performance.now();
    noticed.push(noticedAt - heldAt);
    returned.push(returnedAt - releasedAt);
    samples.push({ noticedMs: round(noticedAt - heldAt), returnedMs: round(returnedAt - releasedAt), reason: entry.reason });
  }
  return { noticed: summarize(noticed), returned: summarize(returned), samples };
}

/**
 * GET /pools every `intervalMs` until `accept` returns something. The time taken is the first answer
 * that shows it, so a figure is late by at most one interval plus one GET.
 */
async function pollUntil<T>(replica: PoolscopeProcess, intervalMs: number, timeoutMs: number, accept: (view: RegionView) => T | undefined, namePrefix?: string): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const asked = performance.now();
    const view = await readRegionView(replica.url, namePrefix);
    const found = accept(view);
    if (found !== undefined) return found;
    if (performance.now() > deadline) {
      throw new Error(`${replica.url}: not seen within ${timeoutMs} ms (last: ${view.count} pools, regions ${JSON.stringify(view.regions)})`);
    }
    const wait = asked + intervalMs - performance.now();
    if (wait > 0) await pause(wait);
  }
}

// ---- 3. drop and return ----

async function measureDropAndReturn(setup: RegionsSetup, pools: number, rounds: number, logger: PartContext['logger']) {
  const writer = setup.site('r3').replicas[0]!;
  const followers = [...setup.site('r1').replicas.map((r, i) => ({ replica: r, name: `r1-${i}` })), ...setup.site('r2').replicas.map((r, i) => ({ replica: r, name: `r2-${i}` }))];
  const proxies = [setup.site('r1').proxies.get('r3')!, setup.site('r2').proxies.get('r3')!];
  const label = 'far';
  const r3 = (view: RegionView) => view.regions.find((r) => r.name === 'r3');

  logger.info({ pools }, 'regions: registering pools in r3');
  const registerStart = performance.now();
  await postAll(writer.url, Array.from({ length: pools }, (_, i) => JSON.stringify(benchRegistration(label, i))), REGISTER_CONCURRENCY);
  const registered = performance.now();
  await Promise.all(
    followers.map(({ replica }) => pollUntil(replica, 100, 120_000, (view) => (view.count === pools && r3(view)?.complete) || undefined, label)),
  );
  const firstFollowMs = performance.now() - registered;

  const listed: number[] = [];
  const complete: number[] = [];
  const dropped: number[] = [];
  const waited: number[] = [];
  const read: number[] = [];
  const apply: number[] = [];
  const resumeWaited: number[] = [];
  const resume: number[] = [];
  const samples: Record<string, unknown>[] = [];
  for (let roundIndex = 0; roundIndex < rounds; roundIndex += 1) {
    logger.info({ round: roundIndex + 1, holdSecs: HOLD_SECS }, 'regions: r3 cut from r1 and r2 until dropped, then released');
    await steady(
      followers.map((f) => f.replica),
      'r3',
    );
    const heldAt = Math.max(...(await Promise.all(proxies.map((proxy) => proxy.hold()))));
    let releasedAt = 0;
    const droppedAt = new Map<string, number>();
    try {
      await Promise.all(
        followers.map(async ({ replica, name }) => {
          await pollUntil(replica, DROPPED_POLL_MS, 60_000, (view) => (r3(view)?.dropped && view.count === 0) || undefined, label);
          droppedAt.set(name, performance.now());
        }),
      );
    } finally {
      releasedAt = Math.max(...(await Promise.all(proxies.map((proxy) => proxy.release()))));
    }
    const logsFrom = followers.map(({ replica }) => replica.logs.length);
    const outcomes = await Promise.all(
      followers.map(async ({ replica, name }) => {
        let listedAt: number | undefined;
        await pollUntil(
          replica,
          LISTED_POLL_MS,
          120_000,
          (view) => {
            if (listedAt === undefined && view.count === pools) listedAt = performance.now();
            return (listedAt !== undefined && r3(view)?.complete) || undefined;
          },
          label,
        );
        return { name, listedAt: listedAt!, completeAt: performance.now() };
      }),
    );
    // The replica logs the snapshot once applied, or the log resumed where it was left (no snapshot read);
    // the line may reach this process a little after the list.
    const returns = await Promise.all(
      followers.map(({ replica }, i) =>
        waitFor(
          () => replica.logs.slice(logsFrom[i]).find((line) => (line.msg === 'store snapshot applied' || line.msg === 'change log resumed') && line.region === 'r3'),
          { timeoutMs: 2000, intervalMs: 20 },
        ).catch(() => undefined),
      ),
    );
    outcomes.forEach(({ name, listedAt, completeAt }, i) => {
      const snapshot = returns[i]?.msg === 'store snapshot applied' ? returns[i] : undefined;
      const resumed = returns[i]?.msg === 'change log resumed' ? returns[i] : undefined;
      const resumeMs = typeof resumed?.resume_ms === 'number' ? resumed.resume_ms : undefined;
      const resumeStartedMs = resumeMs !== undefined && typeof resumed?.time === 'number' ? resumed.time - resumeMs - epochOf(releasedAt) : undefined;
      if (resumeMs !== undefined) resume.push(resumeMs);
      if (resumeStartedMs !== undefined) resumeWaited.push(resumeStartedMs);
      const readMs = typeof snapshot?.read_ms === 'number' ? snapshot.read_ms : undefined;
      const applyMs = typeof snapshot?.apply_ms === 'number' ? snapshot.apply_ms : undefined;
      // The line is logged when the snapshot was read and applied: its start is that much earlier.
      const readStartedMs =
        readMs !== undefined && applyMs !== undefined && typeof snapshot?.time === 'number'
          ? snapshot.time - readMs - applyMs - epochOf(releasedAt)
          : undefined;
      listed.push(listedAt - releasedAt);
      complete.push(completeAt - releasedAt);
      dropped.push(droppedAt.get(name)! - heldAt);
      if (readStartedMs !== undefined) waited.push(readStartedMs);
      if (readMs !== undefined) read.push(readMs);
      if (applyMs !== undefined) apply.push(applyMs);
      // What the replica met between the release and that snapshot (a connection still waiting to reconnect shows here).
      const failures = followers[i]!.replica.logs
        .slice(logsFrom[i])
        .filter((line) => line.region === 'r3' && line.msg === 'store cannot be read; keeping the last view' && (returns[i] === undefined || (line.time as number) <= (returns[i]!.time as number)))
        .map((line) => `${new Date(line.time as number).toISOString().slice(11, 23)} ${String(line.err)}`);
      samples.push({
        round: roundIndex + 1,
        replica: name,
        droppedMs: round(droppedAt.get(name)! - heldAt),
        listedMs: round(listedAt - releasedAt),
        completeMs: round(completeAt - releasedAt),
        snapshotReadStartedMs: readStartedMs === undefined ? null : round(readStartedMs),
        snapshotReadMs: readMs ?? null,
        snapshotApplyMs: applyMs ?? null,
        resumeStartedMs: resumeStartedMs === undefined ? null : round(resumeStartedMs),
        resumeMs: resumeMs ?? null,
        releasedAt: new Date(epochOf(releasedAt)).toISOString().slice(11, 23),
        failedReadsAfterRelease: failures,
      });
    });
  }
  return {
    registerMs: registered - registerStart,
    firstFollowMs,
    listed: summarize(listed),
    complete: summarize(complete),
    dropped: summarize(dropped),
    waited: summarize(waited),
    read: summarize(read),
    apply: summarize(apply),
    resumeWaited: summarize(resumeWaited),
    resume: summarize(resume),
    samples,
  };
}

/**
 * Before a cut: every replica given reports `region` complete, and has for STEADY_MS, so the follower has
 * opened its XREAD connection again since it last read a snapshot; then a random pause, so the cut falls
 * at any point of the follower's XREAD window and its reads of due leases.
 */
async function steady(replicas: PoolscopeProcess[], region: string): Promise<void> {
  for (;;) {
    await Promise.all(replicas.map((replica) => pollUntil(replica, 50, 60_000, (view) => view.regions.find((r) => r.name === region)?.complete || undefined)));
    await pause(STEADY_MS + Math.random() * 500);
    const views = await Promise.all(replicas.map((replica) => readRegionView(replica.url)));
    if (views.every((view) => view.regions.find((r) => r.name === region)?.complete)) return;
  }
}

/** Warnings and errors a replica logged, named by its region (a cut logs some on purpose). */
function problems(replica: PoolscopeProcess, region: string): Record<string, unknown>[] {
  return replica.logs
    .filter((line) => typeof line.level === 'number' && line.level >= 40)
    .map((line) => ({ home: region, time: line.time, level: line.level, msg: line.msg, region: line.region, err: line.err }));
}
