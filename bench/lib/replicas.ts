// poolscope replicas for the benchmarks: the real binary (bin/poolscope.js, running dist/) on the Redis
// store, logging only warnings so log writing is not part of what is measured.
//   BENCH_CPU_PROF=<dir>  each replica runs with `node --cpu-prof --cpu-prof-dir=<dir>` and writes its
//                         profile there when it stops (open it in Chrome DevTools, or read its self times)
//   BENCH_CPU_PROF_INTERVAL=<µs>  with it, the sampling interval (Node's default 1,000 µs cannot show which
//                         turn of the event loop held it; 100 µs can)
import { startPoolscope, type PoolscopeProcess } from '../../test/support/process.js';
import { registration } from '../../test/support/service.js';
import { track } from './children.js';

export interface ReplicaOptions {
  redisUrl: string;
  prefix: string;
  leaseSecs?: number;
  heartbeatSecs?: number;
}

export async function startReplica(options: ReplicaOptions): Promise<PoolscopeProcess> {
  const leaseSecs = options.leaseSecs ?? 15;
  const heartbeatSecs = options.heartbeatSecs ?? Math.max(leaseSecs / 3, 0.001);
  const replica = await startPoolscope(replicaArgs({ ...options, leaseSecs, heartbeatSecs }), {
    env: { POOLSCOPE_LOG_LEVEL: 'warn' },
    nodeArgs: cpuProfileArgs(),
  });
  track(replica.child);
  return replica;
}

/** Node flags that make a replica write a CPU profile into BENCH_CPU_PROF when it exits (Node refuses them in NODE_OPTIONS). */
export function cpuProfileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  const interval = process.env.BENCH_CPU_PROF_INTERVAL;
  if (!dir) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(interval ? [`--cpu-prof-interval=${interval}`] : [])];
}

export function replicaArgs(options: ReplicaOptions & { leaseSecs: number; heartbeatSecs: number }): string[] {
  return [
    '--registration-storage=redis',
    `--redis-url=${options.redisUrl}`,
    `--redis-prefix=${options.prefix}`,
    `--lease-duration-secs=${options.leaseSecs}`,
    `--heartbeat-interval-secs=${Number(options.heartbeatSecs.toFixed(3))}`,
  ];
}

/** Warnings and errors a replica logged (an outage or a refused command during a run is worth knowing). */
export function problemsLogged(replica: PoolscopeProcess): Record<string, unknown>[] {
  return replica.logs.filter((line) => typeof line.level === 'number' && line.level >= 40);
}

/** The registration of bench pool `index`: realistic content, spread over ten clusters. */
export function benchRegistration(label: string, index: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return registration({
    cluster_id: `cluster-${index % 10}`,
    namespace: 'llm',
    name: `${label}-${index}`,
    frontends: [`http://10.${(index >> 8) & 255}.${index & 255}.7:8000`, `http://10.${(index >> 8) & 255}.${index & 255}.8:8000`],
    relay: `http://10.${(index >> 8) & 255}.${index & 255}.9:9000`,
    ...overrides,
  });
}
