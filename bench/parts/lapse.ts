// 3. Lapse detection: from a lease's deadline to the `delete` on a watcher. Pools are registered once
// each on replica A, staggered, with a short lease, and never renewed; a second replica B is watched.
// The deadline is taken on this side as (just before the POST) + lease: Redis stamps the lease after
// that moment, so the true deadline is no earlier and each figure is an upper bound (by at most the
// POST's round trip, reported beside it). Targets: max < 1 s (the contract), p99 ≤ 150 ms.
import { randomPrefix, startPrivateRedis } from '../../test/support/redis-server.js';
import { postPool } from '../lib/http.js';
import { benchRegistration, problemsLogged, startReplica } from '../lib/replicas.js';
import { roundAll, summarize } from '../lib/stats.js';
import { TimedSse } from '../lib/timed-sse.js';
import { informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

/** How long after the last deadline missing deletes are given up on. */
const GRACE_MS = 5000;

export const lapsePart: BenchPart = {
  name: 'lapse',
  async run({ sizes, logger }) {
    const { pools, leaseSecs, staggerMs } = sizes.lapse;
    const leaseMs = leaseSecs * 1000;
    const redis = await startPrivateRedis();
    const prefix = randomPrefix('bench-lapse');
    const replicas = [];
    try {
      replicas.push(await startReplica({ redisUrl: redis.url, prefix, leaseSecs, heartbeatSecs: leaseSecs / 2 }));
      replicas.push(await startReplica({ redisUrl: redis.url, prefix, leaseSecs, heartbeatSecs: leaseSecs / 2 }));
      const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
      const watch = await TimedSse.open(`${b.url}/pools/watch`);
      try {
        const deadlines = new Map<string, number>();
        const deletedAt = new Map<string, number>();
        watch.subscribe((event) => {
          if (event.event !== 'delete') return;
          const { pool } = event.data as { pool: { name: string } };
          if (!deletedAt.has(pool.name)) deletedAt.set(pool.name, event.at);
        });
        logger.info({ pools, leaseSecs, staggerMs }, 'lapse: staggered registrations, never renewed');
        const postMs: number[] = [];
        const started = performance.now();
        for (let i = 0; i < pools; i += 1) {
          // Staggered on a fixed schedule, not after each reply, so a slow POST does not bunch the rest.
          const due = started + i * staggerMs;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          const body = benchRegistration('lapse', i);
          const before = performance.now();
          deadlines.set(body.name as string, before + leaseMs);
          await postPool(a.url, JSON.stringify(body));
          postMs.push(performance.now() - before);
        }
        const lastDeadline = Math.max(...deadlines.values());
        while (deletedAt.size < pools && performance.now() < lastDeadline + GRACE_MS) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const samples = [...deadlines].flatMap(([name, deadline]) => {
          const at = deletedAt.get(name);
          return at === undefined ? [] : [at - deadline];
        });
        const missing = pools - samples.length;
        const latency = summarize(samples);
        // A delete that never came is a miss of the target, not a figure to leave out.
        const max = missing > 0 ? Number.POSITIVE_INFINITY : latency.max;
        return {
          part: 'lapse',
          title: 'Lapse detection (deadline → delete on a watcher)',
          method:
            `Two replicas on one Redis (each sweeps at least every 250 ms, its default, and again as the soonest ` +
            `deadline it saw runs out); ${pools} pools registered once on A, ` +
            `one every ${staggerMs} ms, with a ${leaseSecs} s lease; each delete timed on an SSE stream of B from ` +
            `(just before its POST) + lease — an upper bound on the true latency.`,
          figures: [
            judged({
              id: 'lapse.max',
              label: 'deadline → delete on B, max',
              value: max,
              unit: 'ms',
              reference: { label: 'target', value: 1000, unit: 'ms' },
              comparison: 'below',
              threshold: 1,
              targetText: '< 1 s',
            }),
            informational({ id: 'lapse.p50', label: 'deadline → delete on B, p50', value: latency.p50, unit: 'ms' }),
            judged({
              id: 'lapse.p99',
              label: 'deadline → delete on B, p99',
              value: missing > 0 ? Number.POSITIVE_INFINITY : latency.p99,
              unit: 'ms',
              reference: { label: 'target', value: 150, unit: 'ms' },
              comparison: 'at-most',
              threshold: 1,
              targetText: '≤ 150 ms',
            }),
          ],
          details: {
            latencyMs: roundAll(latency),
            missingDeletes: missing,
            postRoundTripMs: roundAll(summarize(postMs)),
            replicaWarnings: replicas.flatMap(problemsLogged),
          },
        };
      } finally {
        watch.close();
      }
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
      await redis.stop();
    }
  },
};
