// An outage of a region's store (docs/contract.md §9): two regions, r1 with two replicas and r2 with one
// that follows r1; r1's redis-server frozen (SIGSTOP) for three leases, then thawed. Most pools keep
// heartbeating through r1's replicas (their POSTs fail while it is frozen); the rest stopped just before
// the freeze. Measured: how many times any replica answered a complete list without a pool that kept
// heartbeating (target 0), the stopped pools' lapse after the thaw (target: the renewal window + 250 ms on
// r1's replicas; the follower adds its due read's 1 s grace), both from the outage's end as r1's writers
// recorded it (the first write after the thaw, or a later one by a writer that lived through it: the
// window of its PoolRelays runs from then), and how long until every replica, the follower included,
// answers complete with exactly the heartbeating pools.
import { postAll } from '../lib/http.js';
import { readRegionView, startRegions, type RegionView } from '../lib/regions.js';
import { benchRegistration } from '../lib/replicas.js';
import { Redis } from 'ioredis';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import { checked, informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

const LEASE_SECS = 3;
/** The replicas' heartbeat interval (bench/lib/regions.ts) plus the default command timeout. */
const WINDOW_MS = Math.max(1, Math.round(LEASE_SECS / 3)) * 1000 + 1000;
const FREEZE_MS = 3 * LEASE_SECS * 1000;
const POLL_MS = 50;
const DEAD_SHARE = 0.1;

export const outagePart: BenchPart = {
  name: 'outage',
  async run({ sizes, logger }) {
    const { pools } = sizes.outage;
    const deadCount = Math.round(pools * DEAD_SHARE);
    const liveCount = pools - deadCount;
    const setup = await startRegions({ replicas: { r1: 2, r2: 1 }, oneWayDelayMs: 0, holdSecs: 60, leaseSecs: LEASE_SECS });
    try {
      const r1 = setup.site('r1');
      const replicas = setup.sites.flatMap((site) => site.replicas.map((replica) => ({ region: site.name, replica })));
      const live = Array.from({ length: liveCount }, (_, i) => JSON.stringify(benchRegistration('outage-live', i)));
      const dead = Array.from({ length: deadCount }, (_, i) => JSON.stringify(benchRegistration('outage-dead', i)));
      const urls = r1.replicas.map((r) => r.url);
      let turn = 0;
      // The live pools' PoolRelays: every heartbeat interval, alternately through each r1 replica; failures ignored.
      let heartbeating = true;
      const heartbeats = (async () => {
        while (heartbeating) {
          const started = performance.now();
          await postAll(urls[turn++ % urls.length]!, live, 50).catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (performance.now() - started))));
        }
      })();
      await postAll(urls[0]!, dead, 50);
      const everyoneSees = async (view: (url: string) => Promise<RegionView>, accept: (v: RegionView) => boolean) =>
        (await Promise.all(replicas.map(({ replica }) => view(replica.url)))).every(accept);
      const liveView = (url: string) => readRegionView(url, 'outage-live-');
      const deadView = (url: string) => readRegionView(url, 'outage-dead-');
      for (const started = performance.now(); !(await everyoneSees(liveView, (v) => v.complete && v.count === liveCount)); ) {
        if (performance.now() - started > 60_000) throw new Error('outage: the live pools never listed complete on every replica');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }

      // A router polls every replica: a complete list missing a heartbeating pool is what must never happen.
      let polls = 0;
      let wrongLists = 0;
      let polling = true;
      const router = (async () => {
        while (polling) {
          const views = await Promise.all(replicas.map(({ replica }) => liveView(replica.url).catch(() => undefined)));
          for (const view of views) {
            if (!view) continue;
            polls += 1;
            if (view.complete && view.count < liveCount) wrongLists += 1;
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
      })();

      // The dead pools' last heartbeat was their registration just now; r1's Redis freezes.
      logger.info({ pools, live: liveCount, dead: deadCount, freezeMs: FREEZE_MS }, 'outage: freezing r1');
      r1.redis.pause();
      await new Promise((resolve) => setTimeout(resolve, FREEZE_MS));
      r1.redis.resume();
      const thawed = performance.now();
      const thawedAtMs = Date.now();

      // Per replica: when the dead pools are gone, and when it is complete with exactly the live ones.
      const goneAfter = new Map<string, number>();
      /** Wall time (this machine's clock, which r1's Redis TIME also reads) when the dead pools were gone. */
      const goneAtMs = new Map<string, number>();
      const completeAfter = new Map<string, number>();
      while ((goneAfter.size < replicas.length || completeAfter.size < replicas.length) && performance.now() - thawed < 60_000) {
        await Promise.all(
          replicas.map(async ({ replica }) => {
            const [deadLeft, liveNow] = await Promise.all([deadView(replica.url), liveView(replica.url)]);
            const at = performance.now() - thawed;
            if (deadLeft.count === 0 && !goneAfter.has(replica.url)) goneAfter.set(replica.url, at);
            if (deadLeft.count === 0 && !goneAtMs.has(replica.url)) goneAtMs.set(replica.url, Date.now());
            if (liveNow.complete && liveNow.count === liveCount && deadLeft.count === 0 && !completeAfter.has(replica.url)) completeAfter.set(replica.url, at);
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      polling = false;
      heartbeating = false;
      await Promise.all([router, heartbeats]);

      // The outage as r1's writers recorded it in Redis (start:end:window:covered).
      const inspector = new Redis(r1.redis.url);
      const [recorded] = await inspector.zrange(createStoreKeys(r1Prefix(setup)).outages, '-1', '-1').finally(() => inspector.disconnect());
      const [startMs, endMs, windowMs, covered] = (recorded ?? '').split(':').map(Number);
      const max = (values: (number | undefined)[]) => (values.some((v) => v === undefined) ? Number.POSITIVE_INFINITY : Math.round(Math.max(...(values as number[]))));
      const sinceEnd = (url: string) => (recorded && goneAtMs.has(url) ? goneAtMs.get(url)! - endMs! : undefined);
      const homeLapse = max(r1.replicas.map((r) => sinceEnd(r.url)));
      const followerLapse = max(setup.site('r2').replicas.map((r) => sinceEnd(r.url)));
      const thawToGone = max(replicas.map(({ replica }) => goneAfter.get(replica.url)));
      const allComplete = max(replicas.map(({ replica }) => completeAfter.get(replica.url)));
      const outageLines = replicas.map(({ region, replica }) => ({
        region,
        lines: replica.logs.filter((line) => line.msg === 'store outage ended').map(({ outage_ms, window_ms, leases_in_window }) => ({ outage_ms, window_ms, leases_in_window })),
      }));
      return {
        part: 'outage',
        title: `An outage of a region's store (${pools.toLocaleString('en')} pools, r1's Redis frozen for three leases)`,
        method:
          `Two regions on this machine, each with its own redis-server: r1 with two replicas, r2 with one that follows r1 (the binary, ` +
          `\`poolscope serve --region … --regions-file …\`, lease ${LEASE_SECS} s, heartbeat interval ${WINDOW_MS / 1000 - 1} s, command timeout 1 s: ` +
          `a renewal window of ${WINDOW_MS} ms). ${liveCount.toLocaleString('en')} pools heartbeat every second through the r1 replicas in turn (50 POSTs ` +
          `at a time, failures ignored); ${deadCount} were registered once, just before r1's Redis was frozen (SIGSTOP) for ${FREEZE_MS / 1000} s and ` +
          `thawed. A router polled GET /pools of every replica every ${POLL_MS} ms throughout and counted each complete list that lacked a ` +
          `heartbeating pool. From the thaw, each replica's GET /pools was polled until the registered-once pools were gone, and until it ` +
          `answered complete with exactly the heartbeating ones.`,
        figures: [
          checked({
            id: 'outage.wrong_lists',
            label: `complete lists without a heartbeating pool (any replica, of ${polls.toLocaleString('en')} read)`,
            value: wrongLists,
            unit: 'lists',
            shown: `${wrongLists} lists`,
            targetText: '0',
            met: wrongLists === 0 && polls > 0,
          }),
          judged({
            id: 'outage.home_lapse_max',
            label: 'recorded outage end → dead pools gone on r1 replicas, max',
            value: homeLapse,
            unit: 'ms',
            reference: { label: 'target', value: WINDOW_MS + 250, unit: 'ms' },
            comparison: 'at-most',
            threshold: 1,
            targetText: `≤ window + 250 ms (${WINDOW_MS + 250} ms)`,
          }),
          informational({ id: 'outage.follower_lapse_max', label: 'recorded outage end → dead pools gone on the r2 follower', value: followerLapse, unit: 'ms' }),
          informational({ id: 'outage.thaw_to_end', label: 'thaw → recorded outage end (the last r1 writer back)', value: recorded ? Math.round(endMs! - thawedAtMs) : Number.NaN, unit: 'ms' }),
          informational({ id: 'outage.thaw_to_gone_max', label: 'thaw → dead pools gone, every replica', value: thawToGone, unit: 'ms' }),
          informational({ id: 'outage.complete_again_max', label: 'thaw → every replica complete with exactly the heartbeating pools', value: allComplete, unit: 'ms' }),
        ],
        details: { polls, windowMs: WINDOW_MS, recorded: { startMs, endMs, windowMs, covered }, goneAfterMs: Object.fromEntries(goneAfter), completeAfterMs: Object.fromEntries(completeAfter), outageLines },
      };
    } finally {
      await setup.stop();
    }
  },
};

/** The prefix every regions file gives r1 (bench/lib/regions.ts: `bench-<region>`). */
function r1Prefix(_setup: Awaited<ReturnType<typeof startRegions>>): string {
  return 'bench-r1';
}
