// 2. Convergence: from a POST /pools on replica A to the `upsert` on replica B's SSE stream, one
// registration at a time (so each sample is the path's latency, not a queue's). Half the registrations are
// new pools, half change an existing pool's content; both log an upsert. Target: p99 < 50 ms. Beside it,
// the floor of one HTTP hop: a POST to the bare echo before each measured registration, so both see the
// machine as loaded at the same moments (a shared machine's load moves within seconds).
import { randomPrefix, startPrivateRedis } from '../../test/support/redis-server.js';
import { startEchoServer } from '../lib/echo.js';
import { postPool } from '../lib/http.js';
import { benchRegistration, problemsLogged, startReplica } from '../lib/replicas.js';
import { roundAll, summarize } from '../lib/stats.js';
import { TimedSse, type TimedEvent } from '../lib/timed-sse.js';
import { informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

const WARMUP = 20;
const EVENT_TIMEOUT_MS = 5000;

export const convergencePart: BenchPart = {
  name: 'convergence',
  async run({ sizes, logger }) {
    const total = sizes.convergence.registrations;
    const echo = await startEchoServer('hono');
    const redis = await startPrivateRedis();
    const prefix = randomPrefix('bench-conv');
    const replicas = [];
    try {
      // A long lease: nothing lapses during the run.
      replicas.push(await startReplica({ redisUrl: redis.url, prefix, leaseSecs: 300 }));
      replicas.push(await startReplica({ redisUrl: redis.url, prefix, leaseSecs: 300 }));
      const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
      const watch = await TimedSse.open(`${b.url}/pools/watch`);
      try {
        const samples: number[] = [];
        const postMs: number[] = [];
        const floorMs: number[] = [];
        let floorIndex = 0;
        const measure = async (body: Record<string, unknown>, record: boolean) => {
          // One hop now: a POST to the bare echo, just before the measured path.
          const hopStart = performance.now();
          await postPool(echo.url, JSON.stringify(benchRegistration('floor', floorIndex++)));
          if (record) floorMs.push(performance.now() - hopStart);
          const arrived = watch.next((event) => isUpsertOf(event, body), EVENT_TIMEOUT_MS);
          const start = performance.now();
          await postPool(a.url, JSON.stringify(body));
          const posted = performance.now();
          const event = await arrived;
          if (record) {
            samples.push(event.at - start);
            postMs.push(posted - start);
          }
        };
        logger.info({ registrations: total }, 'convergence: POST on A, upsert on B');
        for (let i = 0; i < WARMUP; i += 1) await measure(benchRegistration('warm', i), false);
        const fresh = Math.ceil(total / 2);
        for (let i = 0; i < fresh; i += 1) await measure(benchRegistration('conv', i), true);
        for (let i = 0; i < total - fresh; i += 1) {
          await measure(benchRegistration('conv', i, { capacity: [{ name: 'gpus', value: 16 }] }), true);
        }
        const latency = summarize(samples);
        const post = summarize(postMs);
        const floor = summarize(floorMs);
        const target = { label: 'target', value: 50, unit: 'ms' };
        return {
          part: 'convergence',
          title: 'Convergence (POST on A → upsert on B)',
          method:
            `Two replicas on one Redis; ${total} registrations POSTed to A one after another (${fresh} new pools, ` +
            `${total - fresh} content changes), each timed from just before the POST to the arrival of its upsert ` +
            `on an SSE stream of B (GET /pools/watch), after ${WARMUP} unmeasured ones. Just before each, one POST to ` +
            `the bare Hono echo (heartbeat part): the latency floor of a single HTTP hop at that moment.`,
          figures: [
            judged({
              id: 'convergence.p99',
              label: 'POST on A → upsert on B, p99',
              value: latency.p99,
              unit: 'ms',
              reference: target,
              comparison: 'below',
              threshold: 1,
              targetText: '< 50 ms',
            }),
            informational({ id: 'convergence.p50', label: 'POST on A → upsert on B, p50', value: latency.p50, unit: 'ms' }),
            informational({ id: 'convergence.max', label: 'POST on A → upsert on B, max', value: latency.max, unit: 'ms' }),
            informational({ id: 'convergence.post_p99', label: 'the POST on A alone (round trip), p99', value: post.p99, unit: 'ms' }),
            informational({ id: 'convergence.floor_p99', label: 'one hop: POST to the bare echo, p99', value: floor.p99, unit: 'ms' }),
          ],
          details: {
            latencyMs: roundAll(latency),
            postRoundTripMs: roundAll(post),
            echoRoundTripMs: roundAll(floor),
            replicaWarnings: replicas.flatMap(problemsLogged),
          },
        };
      } finally {
        watch.close();
      }
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
      await redis.stop();
      await echo.stop();
    }
  },
};

function isUpsertOf(event: TimedEvent, body: Record<string, unknown>): boolean {
  if (event.event !== 'upsert') return false;
  const { pool } = event.data as { pool: Record<string, unknown> };
  return (
    pool.cluster_id === body.cluster_id &&
    pool.name === body.name &&
    JSON.stringify(pool.capacity) === JSON.stringify(body.capacity)
  );
}
