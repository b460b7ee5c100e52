// 1. Heartbeat throughput: POST /pools on one replica with the Redis store, against the two limits it
// sits on, measured the same way in the same run: a raw node:http echo that reads and parses the same body
// (HTTP) and redis-benchmark of heartbeat-6.lua (Redis). Target: at least half of the lower limit. Beside
// each rate, the CPU time each server process spent per request, which a shared machine disturbs far less
// than the rates: the replica's is judged against the raw echo's (≤ 1.5 ×; the heartbeat is served on
// Node's request before Hono, so the raw echo is its reference), the bare Hono echo's shown beside it.
import { registrationSchema } from '../../src/contract/index.js';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { DEFAULT_CHANGE_LOG_CAP } from '../../src/store/redis/index.js';
import { randomPrefix, startPrivateRedis } from '../../test/support/redis-server.js';
import { runCannon, type CannonConfig, type CannonResult } from '../lib/autocannon.js';
import { cpuDuring } from '../lib/cpu.js';
import { startEchoServer, type EchoKind } from '../lib/echo.js';
import { postAll } from '../lib/http.js';
import { benchmarkHeartbeatScript, redisServerPid } from '../lib/redis-benchmark.js';
import { benchRegistration, problemsLogged, startReplica } from '../lib/replicas.js';
import { round } from '../lib/stats.js';
import { informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

// Longer than the warm-up and the measured load together, so no pool lapses whatever the rate (a lapsed
// pool would come back as an upsert, not a renewal).
const LEASE_SECS = 60;
/** Replica CPU per heartbeat, at most this many times the raw echo's. */
const CPU_RATIO_TARGET = 1.5;

interface MeasuredLoad {
  load: CannonResult;
  /** CPU µs per request of each watched process. */
  cpuMicrosPerRequest: number[];
}

export const heartbeatPart: BenchPart = {
  name: 'heartbeat',
  async run({ sizes, logger }) {
    const { pools, connections, durationSecs, warmupSecs, redisCalls } = sizes.heartbeat;
    const bodies = Array.from({ length: pools }, (_, i) => JSON.stringify(benchRegistration('hb', i)));
    /**
     * A warm-up, then the measured load with the pids' CPU read around it. The warm-up first POSTs every
     * body once: autocannon starts each connection at the first body, so its own warm-up reaches only the
     * first few hundred, and the measured load would register the rest (an upsert each, followed through
     * the change log) rather than renew them.
     */
    const measure = async (url: string, pids: Array<number | undefined>): Promise<MeasuredLoad> => {
      const config: CannonConfig = { url, method: 'POST', path: '/pools', bodies, connections, durationSecs };
      await postAll(url, bodies, connections);
      await runCannon({ ...config, durationSecs: warmupSecs });
      const { result, cpu } = await cpuDuring(pids, () => runCannon(config));
      return { load: result, cpuMicrosPerRequest: cpu.map((seconds) => (seconds * 1e6) / result.total) };
    };
    const redis = await startPrivateRedis();
    try {
      const redisPid = await redisServerPid(redis.port);
      const measureEcho = async (kind: EchoKind): Promise<MeasuredLoad> => {
        const server = await startEchoServer(kind);
        try {
          return await measure(server.url, [server.pid]);
        } finally {
          await server.stop();
        }
      };
      logger.info('heartbeat: raw node:http POST echo (HTTP limit)');
      const echo = await measureEcho('raw');
      logger.info('heartbeat: bare Hono POST echo (for comparison)');
      const honoEcho = await measureEcho('hono');

      logger.info('heartbeat: POST /pools on one replica, Redis store');
      const replica = await startReplica({ redisUrl: redis.url, prefix: randomPrefix('bench-hb'), leaseSecs: LEASE_SECS });
      let poolscope: MeasuredLoad;
      let replicaProblems: Record<string, unknown>[];
      try {
        poolscope = await measure(replica.url, [replica.child.pid, redisPid]);
        replicaProblems = problemsLogged(replica);
      } finally {
        await replica.stop();
      }

      logger.info('heartbeat: redis-benchmark of heartbeat-6.lua (Redis limit)');
      const script = await benchmarkHeartbeatScript({
        port: redis.port,
        prefix: randomPrefix('bench-rb'),
        calls: redisCalls,
        clients: connections,
        pools,
        registrationJson: canonicalJson(registrationSchema.parse(benchRegistration('hb', 1))),
        leaseMs: LEASE_SECS * 1000,
        changeLogCap: DEFAULT_CHANGE_LOG_CAP,
      });

      const httpLimit = { label: 'HTTP limit (raw node:http POST echo)', value: echo.load.requestsPerSec, unit: 'req/s' };
      const redisLimit = { label: 'Redis limit (redis-benchmark, heartbeat-6.lua)', value: script.callsPerSec, unit: 'calls/s' };
      const lower = httpLimit.value <= redisLimit.value ? httpLimit : redisLimit;
      const [replicaCpu, redisCpuUnderPoolscope] = poolscope.cpuMicrosPerRequest as [number, number];
      const echoCpu = echo.cpuMicrosPerRequest[0]!;
      const honoEchoCpu = honoEcho.cpuMicrosPerRequest[0]!;
      const scriptCpu = (script.redisCpuSeconds * 1e6) / script.calls;
      return {
        part: 'heartbeat',
        title: 'Heartbeat throughput',
        method:
          `autocannon (its own process), ${connections} connections, ${durationSecs} s after a ${warmupSecs} s warm-up, ` +
          `rotating ${pools} distinct registrations (after the warm-up every POST is a renewal); ` +
          `redis-benchmark -c ${connections} -n ${redisCalls} -r ${pools} EVALSHA heartbeat-6.lua with poolscope's keys and ` +
          `arguments, after a warm-up. CPU per request: the server process's user + system time (/proc) during the ` +
          `measured load, divided by the requests answered.`,
        figures: [
          judged({
            id: 'heartbeat.poolscope',
            label: 'POST /pools, one replica, Redis store',
            value: poolscope.load.requestsPerSec,
            unit: 'req/s',
            reference: { ...lower, label: `lower limit, ${lower.label}` },
            comparison: 'at-least',
            threshold: 0.5,
            targetText: '≥ 50 % of the lower limit',
          }),
          informational({ id: 'heartbeat.http_limit', label: httpLimit.label, value: httpLimit.value, unit: 'req/s' }),
          informational({ id: 'heartbeat.hono_echo', label: 'bare Hono POST echo', value: honoEcho.load.requestsPerSec, unit: 'req/s' }),
          informational({ id: 'heartbeat.redis_limit', label: redisLimit.label, value: redisLimit.value, unit: 'calls/s' }),
          informational({ id: 'heartbeat.poolscope_p99', label: 'POST /pools latency p99 under that load', value: poolscope.load.latency.p99, unit: 'ms' }),
          judged({
            id: 'heartbeat.replica_cpu',
            label: 'replica CPU per POST /pools',
            value: replicaCpu,
            unit: 'µs',
            reference: { label: 'raw node:http echo CPU per POST', value: echoCpu, unit: 'µs' },
            comparison: 'at-most',
            threshold: CPU_RATIO_TARGET,
            targetText: `≤ ${CPU_RATIO_TARGET} × the raw echo's`,
          }),
          informational({
            id: 'heartbeat.hono_echo_cpu',
            label: 'bare Hono echo CPU per POST',
            value: honoEchoCpu,
            unit: 'µs',
            reference: { label: 'raw node:http echo CPU per POST', value: echoCpu, unit: 'µs' },
          }),
          informational({
            id: 'heartbeat.redis_cpu',
            label: 'Redis CPU per heartbeat (under POST /pools)',
            value: redisCpuUnderPoolscope,
            unit: 'µs',
            reference: { label: 'per call under redis-benchmark', value: scriptCpu, unit: 'µs' },
          }),
        ],
        details: {
          poolscope: poolscope.load,
          echo: echo.load,
          honoEcho: honoEcho.load,
          redisBenchmark: script,
          ratioToHttpLimit: round(poolscope.load.requestsPerSec / httpLimit.value, 3),
          ratioToRedisLimit: round(poolscope.load.requestsPerSec / redisLimit.value, 3),
          cpuMicrosPerRequest: {
            echo: round(echoCpu, 1),
            honoEcho: round(honoEchoCpu, 1),
            replica: round(replicaCpu, 1),
            redisUnderPoolscope: round(redisCpuUnderPoolscope, 1),
            redisBenchmarkPerCall: round(scriptCpu, 1),
          },
          // What one dedicated core would sustain at these CPU costs.
          oneCoreCapacity: {
            echoReqPerSec: Math.round(1e6 / echoCpu),
            honoEchoReqPerSec: Math.round(1e6 / honoEchoCpu),
            replicaReqPerSec: Math.round(1e6 / replicaCpu),
            redisCallsPerSec: Math.round(1e6 / scriptCpu),
          },
          replicaWarnings: replicaProblems,
        },
      };
    } finally {
      await redis.stop();
    }
  },
};
