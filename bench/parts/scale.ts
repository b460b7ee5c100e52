// 4. 10,000 pools: GET /pools latency with every pool listed, a replica's heap per pool (pool actor and
// every structure that grows with the pools included), and how long a new replica takes to answer
// complete with every pool, against a Redis already holding them.
// Targets: p99 < 20 ms, ≤ 8 KiB per pool, complete ≤ 0.8 s.
import type { Figure } from '../report/types.js';
import { freePort, randomPrefix, startPrivateRedis } from '../../test/support/redis-server.js';
import { runCannon } from '../lib/autocannon.js';
import { cpuDuring } from '../lib/cpu.js';
import { startHeapProbe } from '../lib/heap-probe.js';
import { postAll, waitForPools } from '../lib/http.js';
import { measureNewReplica, type NewReplicaTiming, type RunningReplica } from '../lib/new-replica.js';
import { benchRegistration, problemsLogged, replicaArgs, startReplica } from '../lib/replicas.js';
import { round } from '../lib/stats.js';
import { informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

/** Long enough that no pool lapses during the part. */
const LEASE_SECS = 600;
const POST_CONCURRENCY = 32;

export const scalePart: BenchPart = {
  name: 'scale',
  async run({ sizes, logger }) {
    const { pools, connections, durationSecs } = sizes.scale;
    const bodies = Array.from({ length: pools }, (_, i) => JSON.stringify(benchRegistration('scale', i)));
    const redis = await startPrivateRedis();
    const prefix = randomPrefix('bench-scale');
    try {
      const replica = await startReplica({ redisUrl: redis.url, prefix, leaseSecs: LEASE_SECS });
      let registerMs: number;
      let cannon: Awaited<ReturnType<typeof runCannon>>;
      let single: Awaited<ReturnType<typeof runCannon>>;
      let cpuPerGetMs: number;
      let bodyBytes: number;
      let warnings: Record<string, unknown>[];
      try {
        logger.info({ pools }, 'scale: registering pools');
        const start = performance.now();
        await postAll(replica.url, bodies, POST_CONCURRENCY);
        await waitForPools(replica.url, pools, 60_000);
        registerMs = performance.now() - start;

        logger.info({ connections }, 'scale: GET /pools load');
        bodyBytes = (await (await fetch(`${replica.url}/pools`)).arrayBuffer()).byteLength;
        const load = { url: replica.url, method: 'GET', path: '/pools' } as const;
        await runCannon({ ...load, connections: 1, durationSecs: 1 });
        const measured = await cpuDuring([replica.child.pid], () => runCannon({ ...load, connections: 1, durationSecs }));
        single = measured.result;
        cpuPerGetMs = (measured.cpu[0]! * 1000) / single.total;
        cannon = await runCannon({ ...load, connections, durationSecs: Math.max(1, Math.round(durationSecs / 2)) });
        warnings = problemsLogged(replica);
      } finally {
        await replica.stop();
      }

      logger.info('scale: a new replica against Redis holding every pool');
      const fresh = await spawnNewReplica({ redisUrl: redis.url, prefix, pools, timeoutMs: 30_000 });

      logger.info('scale: heap per pool');
      const heapPerPool = await measureHeapPerPool({ redisUrl: redis.url, bodies });

      return {
        part: 'scale',
        title: `${pools.toLocaleString('en-US')} pools`,
        method:
          `One replica (lease ${LEASE_SECS} s) holding ${pools} pools (GET /pools body ${round(bodyBytes / 1024 / 1024, 2)} MiB); ` +
          `GET /pools by autocannon (its own process): 1 connection for ${durationSecs} s (a router polling; the target's ` +
          `figure), then ${connections} connections, where autocannon's own parsing of each multi-MiB reply is what ` +
          `saturates first on 2 cores. Heap: a replica in a process of its own (node --expose-gc, startServe with the Redis store), ` +
          `heap used after full collections with no pool, then with every pool listed (and GET /pools answered once), ` +
          `difference divided by the pools. New replica: from spawning the binary to its first GET /pools that ` +
          `answers complete with every pool.`,
        figures: [
          judged({
            id: 'scale.get_p99',
            label: 'GET /pools p99, 1 connection',
            value: single.latency.p99,
            unit: 'ms',
            reference: { label: 'target', value: 20, unit: 'ms' },
            comparison: 'below',
            threshold: 1,
            targetText: '< 20 ms',
          }),
          judged({
            id: 'scale.heap_per_pool',
            label: 'replica heap per pool',
            value: heapPerPool.kibPerPool,
            unit: 'KiB',
            reference: { label: 'target', value: 8, unit: 'KiB' },
            comparison: 'at-most',
            threshold: 1,
            targetText: '≤ 8 KiB',
          }),
          newReplicaFigure('scale', fresh, 600),
          informational({ id: 'scale.get_p50', label: 'GET /pools p50, 1 connection', value: single.latency.p50, unit: 'ms' }),
          informational({ id: 'scale.get_cpu', label: 'replica CPU per GET /pools', value: cpuPerGetMs, unit: 'ms' }),
          informational({ id: 'scale.get_loaded_p99', label: `GET /pools p99, ${connections} connections`, value: cannon.latency.p99, unit: 'ms' }),
          informational({ id: 'scale.get_rps', label: `GET /pools throughput, ${connections} connections`, value: cannon.requestsPerSec, unit: 'req/s' }),
          informational({ id: 'scale.new_replica_listening', label: 'new replica: spawn → listening', value: fresh.listeningMs, unit: 'ms' }),
          informational({ id: 'scale.new_replica_rss', label: 'new replica: RSS once complete', value: fresh.rssBytes / 2 ** 20, unit: 'MiB' }),
        ],
        details: {
          getPools: cannon,
          getPoolsOneConnection: single,
          replicaCpuPerGetMs: round(cpuPerGetMs, 2),
          bodyBytes,
          registerAllMs: round(registerMs),
          newReplica: fresh,
          heap: heapPerPool,
          replicaWarnings: warnings,
        },
      };
    } finally {
      await redis.stop();
    }
  },
};

/**
 * A new replica against the Redis holding the pools (its flags: the part's long lease), timed from its
 * spawn to its first complete GET /pools with every pool; `whileComplete` runs on it before it stops.
 */
export function spawnNewReplica<T = undefined>(options: {
  redisUrl: string;
  prefix: string;
  pools: number;
  timeoutMs: number;
  whileComplete?: (replica: RunningReplica) => Promise<T>;
}): Promise<NewReplicaTiming & { whileComplete?: T }> {
  return measureNewReplica({
    args: replicaArgs({ redisUrl: options.redisUrl, prefix: options.prefix, leaseSecs: LEASE_SECS, heartbeatSecs: 5 }),
    pools: options.pools,
    timeoutMs: options.timeoutMs,
    whileComplete: options.whileComplete,
  });
}

/** The spawn → complete figure, judged against `targetMs`. */
export function newReplicaFigure(part: string, fresh: NewReplicaTiming, targetMs: number): Figure {
  return judged({
    id: `${part}.new_replica_complete`,
    label: 'new replica: spawn → complete with every pool',
    value: fresh.completeMs,
    unit: 'ms',
    reference: { label: 'target', value: targetMs, unit: 'ms' },
    comparison: 'at-most',
    threshold: 1,
    targetText: `≤ ${targetMs / 1000} s`,
  });
}

async function measureHeapPerPool(options: { redisUrl: string; bodies: string[] }) {
  const port = await freePort();
  const probe = await startHeapProbe([
    ...replicaArgs({ redisUrl: options.redisUrl, prefix: randomPrefix('bench-heap'), leaseSecs: LEASE_SECS, heartbeatSecs: 5 }),
    `--listen=127.0.0.1:${port}`,
  ]);
  try {
    await waitForPools(probe.url, 0, 10_000);
    const before = await probe.heapUsed();
    await postAll(probe.url, options.bodies, POST_CONCURRENCY);
    await waitForPools(probe.url, options.bodies.length, 60_000);
    const after = await probe.heapUsed();
    const pools = options.bodies.length;
    return { heapBeforeBytes: before, heapAfterBytes: after, pools, kibPerPool: round((after - before) / pools / 1024, 3) };
  } finally {
    await probe.stop();
  }
}
