// The Redis limit of the heartbeat benchmark: Debian's redis-benchmark calling heartbeat-6.lua by
// EVALSHA, with the keys and arguments poolscope sends, over `pools` distinct pools (`-r`), so after a
// warm-up pass nearly every call is a plain renewal, as in production.
import { createStoreKeys } from '../../src/store/redis/keys.js';
import { scriptSource } from '../../src/store/redis/scripts.js';
import { REGISTRATION_BACKSTOP_MS } from '../../src/store/redis/store.js';
import { outputOf, spawnTracked } from './children.js';
import { cpuDuring } from './cpu.js';

/** redis-benchmark replaces this 12-character placeholder with a random 12-digit number below `-r`. */
const RANDOM = '__rand_int__';

export interface HeartbeatScriptBenchmark {
  callsPerSec: number;
  /** Milliseconds, as redis-benchmark reports them. */
  latency: { p50: number; p99: number; max: number; mean: number };
  calls: number;
  clients: number;
  /** Change log entries the measured calls appended (upserts: ≈ 0 once every pool is registered). */
  logEntriesAppended: number;
  /** CPU seconds redis-server used during the measured calls. */
  redisCpuSeconds: number;
  sha: string;
}

export interface HeartbeatScriptOptions {
  port: number;
  prefix: string;
  calls: number;
  clients: number;
  pools: number;
  /** The registration as the store writes it (canonical JSON). */
  registrationJson: string;
  leaseMs: number;
  changeLogCap: number;
}

export async function benchmarkHeartbeatScript(options: HeartbeatScriptOptions): Promise<HeartbeatScriptBenchmark> {
  // As Redis runs it: with the renewal window's rule in place of its include line.
  const source = scriptSource('heartbeat-6.lua');
  const sha = (await redisCli(options.port, ['SCRIPT', 'LOAD', source])).trim();
  const keys = createStoreKeys(options.prefix);
  // The hash key and the member get independent random numbers (redis-benchmark draws one per
  // placeholder): each call still finds a live lease and an unchanged registration after the warm-up,
  // so it does exactly a renewal's work.
  const member = `cluster-1/llm/pool-${RANDOM}`;
  const args = [
    'EVALSHA', sha, '6',
    keys.pool(member), keys.deadlines, keys.changes, keys.stamp, keys.outages, keys.gapRenewals,
    member, options.registrationJson, String(options.leaseMs), String(options.changeLogCap),
    String(REGISTRATION_BACKSTOP_MS), '2000',
  ];
  const run = (calls: number) =>
    redisBenchmark(options.port, ['-n', String(calls), '-c', String(options.clients), '-r', String(options.pools), '--csv', ...args]);

  await run(options.pools * 20);
  const logBefore = Number(await redisCli(options.port, ['XLEN', keys.changes]));
  const redisPid = await redisServerPid(options.port);
  const { result: csv, cpu } = await cpuDuring([redisPid], () => run(options.calls));
  const logAfter = Number(await redisCli(options.port, ['XLEN', keys.changes]));
  const [rps, avg, , p50, , p99, max] = parseCsvRow(csv);
  return {
    callsPerSec: rps,
    latency: { p50, p99, max, mean: avg },
    calls: options.calls,
    clients: options.clients,
    logEntriesAppended: logAfter - logBefore,
    redisCpuSeconds: cpu[0]!,
    sha,
  };
}

/** The numbers of the result row: rps, avg, min, p50, p95, p99, max (the test name may hold commas). */
function parseCsvRow(csv: string): [number, number, number, number, number, number, number] {
  const row = csv.trim().split('\n').pop() ?? '';
  const match = /"([\d.]+)","([\d.]+)","([\d.]+)","([\d.]+)","([\d.]+)","([\d.]+)","([\d.]+)"\s*$/.exec(row);
  if (!match) throw new Error(`unexpected redis-benchmark output: ${csv.slice(-500)}`);
  return match.slice(1).map(Number) as [number, number, number, number, number, number, number];
}

/** The pid of the redis-server on `port` (INFO server), for reading its CPU time. */
export async function redisServerPid(port: number): Promise<number> {
  const info = await redisCli(port, ['INFO', 'server']);
  const match = /^process_id:(\d+)/m.exec(info);
  if (!match) throw new Error(`no process_id in INFO server of port ${port}`);
  return Number(match[1]);
}

function redisCli(port: number, args: string[]): Promise<string> {
  const child = spawnTracked('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return outputOf(child, 'redis-cli');
}

function redisBenchmark(port: number, args: string[]): Promise<string> {
  const child = spawnTracked('redis-benchmark', ['-h', '127.0.0.1', '-p', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return outputOf(child, 'redis-benchmark');
}
