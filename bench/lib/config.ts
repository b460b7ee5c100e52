// How big each benchmark part is. BENCH_QUICK=1 picks small sizes for a smoke run (seconds, not
// minutes) while developing; the full sizes are what BENCHMARKS.md reports.

export interface BenchSizes {
  quick: boolean;
  heartbeat: {
    /** Distinct pools the heartbeat load rotates through (most requests are renewals). */
    pools: number;
    connections: number;
    /** Seconds of measured load per target (echo, poolscope). */
    durationSecs: number;
    /** Seconds of unmeasured load first: registers every pool and warms the JIT. */
    warmupSecs: number;
    /** Calls of the heartbeat script for redis-benchmark. */
    redisCalls: number;
  };
  /** Spawns of the binary timed to its first answer (after one not counted). */
  startup: { runs: number };
  convergence: { registrations: number };
  lapse: { pools: number; leaseSecs: number; staggerMs: number };
  scale: {
    pools: number;
    /** Concurrent connections of the GET /pools load. */
    connections: number;
    durationSecs: number;
  };
  scale100k: {
    /** Pools written to Redis (real leases) before a new replica is spawned against it. */
    pools: number;
    /** Changes made while a watch stream is away, before it reconnects with Last-Event-ID. */
    changes: number;
  };
  /** The etcd peer: lease expiries timed like the lapse part's, puts timed like the convergence part's. */
  etcd: { leases: number; staggerMs: number; puts: number };
  regions: {
    /** POSTs in region 1, each timed to its upsert on a region-2 replica's watch stream. */
    follows: number;
    /** Holds of the region-2 → region-1 path, each timed until region 2's replica reports it. */
    cuts: number;
    /** Pools registered in region 3 for the drop-and-return rounds. */
    pools: number;
    /** Rounds of: cut region 3 until dropped, release, time until listed again. */
    rounds: number;
    /** Registrations of 16 KiB a new follower reads over a 25 MB/s, 40 ms path (bench/parts/regions-big.ts). */
    bigPools: number;
  };
  /** Pools of the outage part (a tenth registered once, the rest heartbeating through the freeze). */
  outage: { pools: number };
  /** A fleet's day (bench/parts/fleet.ts); BENCH_FLEET_MINUTES sets the measured window. */
  fleet: { pools: number; watchersPerReplica: number; routers: number; changesPerSec: number; durationSecs: number; warmupSecs: number };
}

export function benchSizes(env: NodeJS.ProcessEnv = process.env): BenchSizes {
  const quick = env.BENCH_QUICK === '1';
  const sizes = quick ? quickSizes() : fullSizes();
  // BENCH_SCALE100K_POOLS: the scale100k part at another size (its targets stay the 100,000 pools' ones).
  if (env.BENCH_SCALE100K_POOLS) sizes.scale100k.pools = Number(env.BENCH_SCALE100K_POOLS);
  // BENCH_FLEET_MINUTES: the fleet part's measured window (default 5, half a minute with BENCH_QUICK=1).
  if (env.BENCH_FLEET_MINUTES) sizes.fleet.durationSecs = Number(env.BENCH_FLEET_MINUTES) * 60;
  return sizes;
}

function quickSizes(): BenchSizes {
  return {
    quick: true,
    heartbeat: { pools: 200, connections: 50, durationSecs: 2, warmupSecs: 1, redisCalls: 20_000 },
    startup: { runs: 3 },
    convergence: { registrations: 100 },
    lapse: { pools: 40, leaseSecs: 1, staggerMs: 10 },
    scale: { pools: 1_000, connections: 4, durationSecs: 2 },
    scale100k: { pools: 5_000, changes: 100 },
    etcd: { leases: 40, staggerMs: 10, puts: 100 },
    regions: { follows: 20, cuts: 2, pools: 1_000, rounds: 1, bigPools: 1_000 },
    outage: { pools: 200 },
    fleet: { pools: 2_000, watchersPerReplica: 50, routers: 10, changesPerSec: 10, durationSecs: 30, warmupSecs: 5 },
  };
}

function fullSizes(): BenchSizes {
  return {
    quick: false,
    heartbeat: { pools: 1_000, connections: 50, durationSecs: 10, warmupSecs: 3, redisCalls: 300_000 },
    startup: { runs: 15 },
    convergence: { registrations: 1_000 },
    lapse: { pools: 250, leaseSecs: 2, staggerMs: 10 },
    scale: { pools: 10_000, connections: 4, durationSecs: 10 },
    scale100k: { pools: 100_000, changes: 1_000 },
    etcd: { leases: 250, staggerMs: 10, puts: 1_000 },
    regions: { follows: 200, cuts: 5, pools: 10_000, rounds: 2, bigPools: 10_000 },
    outage: { pools: 1_000 },
    fleet: { pools: 20_000, watchersPerReplica: 500, routers: 50, changesPerSec: 10, durationSecs: 300, warmupSecs: 10 },
  };
}
