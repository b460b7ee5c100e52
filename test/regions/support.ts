// Regions end to end (docs/contract.md §7): a real redis-server per region, started by the test file, and
// replicas started in-process by `startServe` (the composition root `poolscope serve` runs) on 127.0.0.1
// and a free port, each with a home region and the regions file every replica shares. Leases, holds and
// command timeouts are short so every rule shows within seconds; tests wait by polling until a deadline.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { poolKey, poolListSchema, type PoolList, type Registration } from '../../src/contract/index.js';
import type { Join } from '../../src/join/join.js';
import { DEFAULT_CONFIG, type RegionConfig, type ServeConfig } from '../../src/service/config.js';
import { startServe } from '../../src/service/start.js';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import { postJson } from '../support/http.js';
import { SseReader } from '../support/sse.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { captureLogs, type CapturedLogs } from '../support/logs.js';
import { randomPrefix, startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { registration } from '../support/registration.js';
import { repeatEvery, waitFor } from '../support/wait.js';

/** Short enough that a lapse, a hold and a drop each take a second or two. */
export const LEASE_MS = 1500;
export const HEARTBEAT_INTERVAL_MS = 300;
export const HOLD_MS = 1500;
/** Every region's command timeout (a held path is noticed within it + 250 ms). */
export const COMMAND_TIMEOUT_MS = 400;
/** A reader may take this much longer than the command timeout to notice a held path (docs/design.md). */
export const NOTICE_SLACK_MS = 250;
/** How long past its deadline a followed region's lease is read as lapsed (the join's default). */
export const DUE_GRACE_MS = 1000;

/** Things a test started (replicas, heartbeats, proxies, clients), stopped after it in reverse order. */
export function useCleanup(): <T extends { stop(): Promise<unknown> }>(thing: T) => T {
  const started: { stop(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const thing of started.splice(0).reverse()) await thing.stop();
  });
  return (thing) => {
    started.push(thing);
    return thing;
  };
}

/**
 * One redis-server per region name, started before the file's tests and stopped after them. Tests keep
 * apart by prefix: `regionsFile()` gives each call new ones.
 */
export function useRegionServers(names: readonly string[], args: (name: string) => string[] = () => []): Map<string, PrivateRedis> {
  const servers = new Map<string, PrivateRedis>();
  beforeAll(async () => {
    for (const name of names) servers.set(name, await startPrivateRedis({ args: args(name) }));
  });
  afterAll(async () => {
    await Promise.all([...servers.values()].map((server) => server.stop()));
  });
  return servers;
}

/** The two regions most of these tests use. */
export const A = 'eu-west-1';
export const B = 'us-east-1';

/**
 * A test file's regions: a redis-server per region name (`useRegionServers`), the things each test starts
 * stopped after it (`track`, `useCleanup`), and starters that track what they start.
 */
export function useRegions(names: readonly string[], args?: (name: string) => string[]) {
  const servers = useRegionServers(names, args);
  const track = useCleanup();
  return {
    servers,
    track,
    /**
     * A replica of each of `regions`, started in that order, all on `file`, except that `reads[region]`
     * gives that replica other URLs for some regions (a proxy, a read replica; see `via`).
     */
    async startReplicas<const R extends readonly string[]>(
      file: readonly RegionConfig[],
      regions: R,
      reads: Record<string, Record<string, string>> = {},
    ): Promise<{ [I in keyof R]: Replica }> {
      const replicas: Replica[] = [];
      for (const region of regions) {
        const regionsOfReplica = reads[region] === undefined ? file : via(file, reads[region]);
        replicas.push(track(await startReplica({ region, regions: regionsOfReplica })));
      }
      return replicas as { [I in keyof R]: Replica };
    },
    /** A TCP proxy in front of a region's redis-server, closed after the test; `url` reaches Redis through it. */
    async proxyTo(region: string): Promise<TcpProxy & { url: string }> {
      const proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: servers.get(region)!.port } });
      track({ stop: () => proxy.close() });
      return Object.assign(proxy, { url: `redis://127.0.0.1:${proxy.port}` });
    },
  };
}

/** The regions file as every replica reads it: each region on its own server with a new prefix. */
export function regionsFile(servers: ReadonlyMap<string, PrivateRedis>, commandTimeoutMs = COMMAND_TIMEOUT_MS): RegionConfig[] {
  return [...servers]
    .map(([name, server]) => ({ name, redisUrl: server.url, prefix: randomPrefix(name), commandTimeoutMs }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The same file, with some regions reached through another URL (a TCP proxy, a read replica). */
export function via(regions: readonly RegionConfig[], urls: Record<string, string>): RegionConfig[] {
  return regions.map((r) => (urls[r.name] === undefined ? r : { ...r, redisUrl: urls[r.name]! }));
}

export interface ReplicaOptions {
  region: string;
  regions: readonly RegionConfig[];
  leaseMs?: number;
  holdMs?: number;
  heartbeatIntervalMs?: number;
}

export interface Replica {
  region: string;
  url: string;
  join: Join;
  logs: CapturedLogs;
  /** GET /pools, checked against the contract's schema. */
  list(): Promise<PoolList>;
  stop(): Promise<void>;
}

/** A replica of `region` (`poolscope serve --region R --regions-file F`), in-process on a free port. */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const logs = captureLogs('info');
  const config: ServeConfig = {
    ...DEFAULT_CONFIG,
    listen: { host: '127.0.0.1', port: 0 },
    registrationStorage: 'redis',
    leaseMs: options.leaseMs ?? LEASE_MS,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
    region: options.region,
    regions: [...options.regions],
    regionHoldMs: options.holdMs ?? HOLD_MS,
  };
  const handle = await startServe(config, logs.logger);
  const url = handle.server.url;
  return {
    region: options.region,
    url,
    join: handle.join,
    logs,
    list: () => listPools(url),
    stop: () => handle.stop(),
  };
}

export async function listPools(url: string): Promise<PoolList> {
  const response = await fetch(`${url}/pools`);
  if (response.status !== 200) throw new Error(`GET /pools: ${response.status}`);
  return poolListSchema.parse(await response.json());
}

/** A pool of a cluster in `region` (its cluster id names the region, so keys never collide by accident). */
export function poolOf(region: string, name: string, overrides: Record<string, unknown> = {}): Registration {
  return registration({ cluster_id: `${region}-c1`, name, location: { region, zone: `${region}a` }, ...overrides });
}

export interface Heartbeats {
  readonly registration: Registration;
  /** Send this content from now on (and at once). */
  change(next: Registration): Promise<void>;
  /** Status of the last heartbeat sent. */
  readonly lastStatus: number | undefined;
  stop(): Promise<void>;
}

/**
 * A PoolRelay's heartbeats to one replica: the first is accepted before this returns, then one every
 * `everyMs` (failures are only recorded in `lastStatus`).
 */
export async function keepRegistered(replicaUrl: string, pool: Registration, everyMs = HEARTBEAT_INTERVAL_MS): Promise<Heartbeats> {
  let current = pool;
  let lastStatus: number | undefined;
  const send = async () => {
    const response = await postJson(replicaUrl, current);
    lastStatus = response.status;
    await response.body?.cancel();
    return response.status;
  };
  // A relay retries a 503 (a replica whose Redis connection is being replaced answers one); anything
  // else than 200 or 503 is a refusal and fails at once.
  const first = await waitFor(async () => {
    const status = await send();
    return status !== 503 && status;
  }, { timeoutMs: 5000, message: `POST /pools to ${replicaUrl} answered other than 503` });
  if (first !== 200) throw new Error(`POST /pools to ${replicaUrl}: ${first}`);
  const loop = repeatEvery(everyMs, send);
  return {
    get registration() {
      return current;
    },
    get lastStatus() {
      return lastStatus;
    },
    async change(next) {
      current = next;
      const status = await send();
      if (status !== 200) throw new Error(`POST /pools to ${replicaUrl}: ${status}`);
    },
    stop: () => loop.stop(),
  };
}

/** GET /pools/watch on a replica, read as it comes; `stop()` closes it. */
export async function openWatch(url: string): Promise<SseReader & { stop(): Promise<void> }> {
  const reader = await SseReader.open(url, '/pools/watch');
  return Object.assign(reader, { stop: () => reader.close() });
}

/** Names of the pools a list holds, sorted. */
export const names = (list: PoolList): string[] => list.pools.map((p) => p.name).sort();

/** `lease_regions` by pool name. */
export const leaseRegionsByName = (list: PoolList): Record<string, string[] | undefined> =>
  Object.fromEntries(list.pools.map((p) => [p.name, p.lease_regions]));

/** A region's entry in a list. */
export const entryOf = (list: PoolList, region: string) => list.regions?.find((r) => r.name === region);

/** A plain client of a region's Redis, for looking at its keys (closed by `stop()`). */
export function inspectRedis(url: string): { redis: Redis; stop(): Promise<void> } {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  return { redis, stop: async () => void redis.disconnect() };
}

/** Every key under a region's prefix (SCAN, never KEYS). */
export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `{${prefix}}:*`, 'COUNT', 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

/**
 * Whether a region's Redis holds anything of `pool`: its hash, a deadline, or a change log entry naming it.
 */
export async function holdsPool(redis: Redis, prefix: string, pool: Registration): Promise<{ hash: boolean; deadline: boolean; logged: boolean }> {
  const keys = createStoreKeys(prefix);
  const key = poolKey(pool);
  const [hash, deadline, entries] = await Promise.all([
    redis.exists(keys.pool(key)),
    redis.zscore(keys.deadlines, key),
    redis.xrange(keys.changes, '-', '+'),
  ]);
  const logged = entries.some(([, fields]) => fields.some((value, i) => i % 2 === 1 && fields[i - 1] === 'key' && value === key));
  return { hash: hash === 1, deadline: deadline !== null, logged };
}
