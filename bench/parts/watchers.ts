// Watchers: 10,000 GET /pools/watch streams on one replica (docs/contract.md §8). The replica's RSS per
// watcher; the time from a POST to its upsert on the last of the 10,000 streams; /healthz latency while
// 20 changes fan out. Targets: ≤ 16 KiB per watcher, ≤ 1 s to the last watcher, /healthz p99 ≤ 200 ms.
import { startPoolscope } from '../../test/support/process.js';
import { registration } from '../../test/support/registration.js';
import { track } from '../lib/children.js';
import { rssBytes } from '../lib/cpu.js';
import { postPool } from '../lib/http.js';
import { problemsLogged } from '../lib/replicas.js';
import { round, roundAll, summarize } from '../lib/stats.js';
import { WatchClients } from '../lib/watch-clients.js';
import { informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

/** Watch streams and changes: the sizes, or a smoke run's; BENCH_WATCHERS sets the streams. */
function sizes(quick: boolean) {
  const watchers = Number(process.env.BENCH_WATCHERS ?? (quick ? 500 : 10_000));
  return { watchers, changes: quick ? 5 : 20 };
}

export const watchersPart: BenchPart = {
  name: 'watchers',
  async run({ sizes: all, logger }) {
    const { watchers, changes } = sizes(all.quick);
    // Room for every stream: --max-connections and --max-watchers above the count.
    const replica = await startPoolscope(
      ['--lease-duration-secs=600', '--heartbeat-interval-secs=5', `--max-connections=${watchers + 100}`, `--max-watchers=${watchers + 100}`],
      { env: { POOLSCOPE_LOG_LEVEL: 'warn' } },
    );
    track(replica.child);
    const pid = replica.child.pid!;
    let clients: WatchClients | undefined;
    try {
      // Warm the routes (and the JIT) before the baseline.
      await postPool(replica.url, JSON.stringify(registration({ name: 'warm-up' })));
      for (let i = 0; i < 50; i++) await (await fetch(`${replica.url}/healthz`)).text();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const rssBefore = rssBytes(pid);

      logger.info({ watchers }, 'watchers: opening watch streams');
      const openStarted = performance.now();
      clients = await WatchClients.open(replica.port, watchers);
      const openMs = performance.now() - openStarted;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const rssAfter = rssBytes(pid);
      const kibPerWatcher = (rssAfter - rssBefore) / watchers / 1024;

      logger.info({ changes }, 'watchers: changes fanned out, /healthz probed meanwhile');
      const health: number[] = [];
      const healthFailures: string[] = [];
      let probing = true;
      const probe = (async () => {
        while (probing) {
          const started = performance.now();
          try {
            const response = await fetch(`${replica.url}/healthz`);
            await response.text();
            if (response.status === 200) health.push(performance.now() - started);
            else healthFailures.push(`status ${response.status}`);
          } catch (error) {
            healthFailures.push(String((error as Error).cause ?? error));
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      const toLast: number[] = [];
      try {
        for (let i = 0; i < changes; i++) {
          const name = `watched-${i}`;
          const last = clients.expect(`"name":"${name}"`);
          const posted = performance.now();
          await postPool(replica.url, JSON.stringify(registration({ name })));
          toLast.push((await last) - posted);
        }
      } finally {
        probing = false;
        await probe;
      }
      const fanOut = summarize(toLast);
      const healthz = summarize(health);
      const warnings = problemsLogged(replica);
      return {
        part: 'watchers',
        title: `${watchers.toLocaleString('en-US')} watch streams`,
        method:
          `One replica (the binary, memory store) and ${watchers} GET /pools/watch streams from the benchmark process (plain ` +
          `sockets, each looking only for the marker of the change under way). RSS: the replica's VmRSS after every stream got ` +
          `its resync, minus before any was opened, divided by the streams (kernel socket buffers are not in it). Fan-out: ` +
          `${changes} changes one after another, each from the POST being sent to its upsert arriving on the last of the ` +
          `${watchers} streams (the benchmark process reads every stream, so its own reading is in the figure). /healthz: ` +
          `one request at a time, every 10 ms, throughout those changes.`,
        figures: [
          judged({
            id: 'watchers.rss_per_watcher',
            label: 'replica RSS per watch stream',
            value: round(kibPerWatcher, 2),
            unit: 'KiB',
            reference: { label: 'target', value: 16, unit: 'KiB' },
            comparison: 'at-most',
            threshold: 1,
            targetText: '≤ 16 KiB',
          }),
          judged({
            id: 'watchers.post_to_last_max',
            label: `POST → upsert on the last of ${watchers.toLocaleString('en-US')} streams, max of ${changes}`,
            value: round(fanOut.max),
            unit: 'ms',
            reference: { label: 'target', value: 1000, unit: 'ms' },
            comparison: 'at-most',
            threshold: 1,
            targetText: '≤ 1 s',
          }),
          judged({
            id: 'watchers.healthz_p99',
            label: `/healthz p99 during ${changes} changes`,
            value: round(healthz.p99),
            unit: 'ms',
            reference: { label: 'target', value: 200, unit: 'ms' },
            comparison: 'at-most',
            threshold: 1,
            targetText: '≤ 200 ms',
          }),
          informational({ id: 'watchers.post_to_last_p50', label: 'POST → upsert on the last stream, median', value: round(fanOut.p50), unit: 'ms' }),
          informational({ id: 'watchers.healthz_max', label: `/healthz max during ${changes} changes`, value: round(healthz.max), unit: 'ms' }),
          informational({ id: 'watchers.healthz_failures', label: `/healthz requests failed during ${changes} changes`, value: healthFailures.length, unit: '' }),
          informational({ id: 'watchers.open_all', label: `opening ${watchers.toLocaleString('en-US')} streams, to the last resync`, value: round(openMs), unit: 'ms' }),
        ],
        details: {
          watchers,
          changes,
          rssBeforeBytes: rssBefore,
          rssAfterBytes: rssAfter,
          postToLastMs: roundAll(fanOut),
          healthzMs: roundAll(healthz),
          streamsClosedEarly: clients.closedEarly,
          healthzFailures: healthFailures,
          replicaWarnings: warnings,
        },
      };
    } finally {
      clients?.close();
      await replica.stop();
    }
  },
};
