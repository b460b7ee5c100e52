// The service (test/support/service.ts, assembled as `serve` assembles it) in mcs/karmada mode on real
// dependencies: the EndpointSlice source on the real @kubernetes/client-node against a FakeKubeApi, the
// Redis store on a real redis-server (useRedis), the Hono app on a real 127.0.0.1 port. One pino logger
// for every part, so a test sees the source's and the join's warnings in one place. Everything a test
// starts here is stopped by `stopMcsServices()` (call it in afterEach).
import { expect } from 'vitest';
import type { PoolList } from '../../../src/contract/index.js';
import type { DebugPool } from '../../../src/debug/describe.js';
import { createSliceSource, type KubeSliceSource } from '../../../src/kube/index.js';
import type { BackoffOptions } from '../../../src/util/backoff.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';
import { listPools, postJson } from '../../support/http.js';
import { captureLogs } from '../../support/logs.js';
import { registration } from '../../support/registration.js';
import { startService, type TestService } from '../../support/service.js';
import { SseReader } from '../../support/sse.js';
import { BackoffGate } from './backoff-gate.js';
import { modeOf, type Flavour } from './slices.js';

export interface McsServiceOptions {
  /** The test's Redis (useRedis): its URL, and the running test's key prefix. */
  redis: { url: string; prefix: string };
  flavour?: Flavour;
  /** Default 30 s: long enough that nothing lapses unless the test waits for it. */
  leaseMs?: number;
  frontendPortName?: string;
  /** An already prepared fake API server (default: a new, empty one). */
  fake?: FakeKubeApi;
  /** Default 50 ms. */
  rewatchGraceMs?: number;
  /** Default: 50 ms doubling to 400 ms, so a Redis outage is retried quickly. */
  storeBackoff?: BackoffOptions;
  /** Default 300 ms. */
  redisCommandTimeoutMs?: number;
  /** Hold the slice source's backoff gate from the start (the test lets it go on). */
  holdBackoff?: boolean;
  /** `--router-service-name` / `--router-port-name` (default `global-router` / `relay`, as serve's). */
  routerServiceName?: string;
  routerPortName?: string;
  /** The slice source's warning hook (as `serve` counts warnings with). */
  onSliceWarning?: (kind: 'frontend_slice_without_port') => void;
}

export interface PoolRef {
  cluster: string;
  namespace: string;
  pool: string;
}

export type DebugList = { complete: boolean; reasons: string[]; pools: DebugPool[] };

export interface McsService extends TestService {
  fake: FakeKubeApi;
  source: KubeSliceSource;
  leaseMs: number;
  /** The slice source's backoff: recorded delays, and a gate the test may hold. */
  backoff: BackoffGate;
  /** POST /pools for the pool (a PoolRelay heartbeat); expects 200. */
  heartbeat(ref: PoolRef, overrides?: Record<string, unknown>): Promise<void>;
  /** Heartbeat these pools every lease/4 until the returned function is called (or the service stops). */
  keepBeating(refs: PoolRef[]): () => void;
  pools(): Promise<PoolList>;
  debug(): Promise<DebugList>;
  debugPool(key: string): Promise<DebugPool>;
  /** The state of a pool's actor right now (undefined: never seen). */
  stateOf(key: string): string | undefined;
  /** GET /pools/watch, closed when the service stops. */
  watch(): Promise<SseReader>;
  /** Warnings (level 40) naming this pool. */
  warningsFor(key: string): Record<string, unknown>[];
}

const running: McsService[] = [];

export async function stopMcsServices(): Promise<void> {
  for (const service of running.splice(0).reverse()) await service.stop();
}

/** The registration a PoolRelay of `ref` sends, with `frontends` and `relay` that MCS modes must ignore. */
export function registrationFor(ref: PoolRef, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return registration({
    cluster_id: ref.cluster,
    namespace: ref.namespace,
    name: ref.pool,
    model: `org/${ref.pool}`,
    capabilities: ['chat', `cap-${ref.pool}`],
    location: { region: `region-${ref.cluster}`, zone: `zone-${ref.cluster}` },
    // Decoys: in mcs/karmada modes the addresses come from MCS only.
    frontends: ['http://192.0.2.10:8000'],
    relay: 'http://192.0.2.20:9000',
    ...overrides,
  });
}

export async function startMcsService(options: McsServiceOptions): Promise<McsService> {
  const flavour = options.flavour ?? 'mcs';
  const leaseMs = options.leaseMs ?? 30_000;
  const frontendPortName = options.frontendPortName ?? 'http';
  const logs = captureLogs();
  const fake = options.fake ?? (await FakeKubeApi.start());
  const backoff = new BackoffGate();
  if (options.holdBackoff) backoff.hold();
  const source = createSliceSource({
    kubeConfig: fake.kubeConfig(),
    mode: modeOf(flavour),
    relayServiceSuffix: '-pool-relay',
    frontendServiceSuffix: '-frontend',
    frontendPortName,
    routerServiceName: options.routerServiceName ?? 'global-router',
    routerPortName: options.routerPortName ?? 'relay',
    logger: logs.logger.child({ component: 'endpointslices' }),
    // The product's backoff numbers (0.8 s doubling to 30 s, jitter), with the wait handed to the test.
    backoff: { sleep: backoff.sleep },
    rewatchGraceMs: options.rewatchGraceMs ?? 50,
    onWarning: options.onSliceWarning,
  });
  let service: TestService;
  try {
    service = await startService({
      poolDiscovery: modeOf(flavour),
      registrationStorage: 'redis',
      redisUrl: options.redis.url,
      redisPrefix: options.redis.prefix,
      redisCommandTimeoutMs: options.redisCommandTimeoutMs ?? 300,
      leaseMs,
      heartbeatIntervalMs: Math.floor(leaseMs / 4),
      frontendPortName,
      slices: source,
      join: { sweepIntervalMs: 25, storeBackoff: options.storeBackoff ?? { initialMs: 50, maxMs: 400 } },
      logs,
    });
  } catch (error) {
    await fake.close();
    throw error;
  }
  const { url, join } = service;
  const beaters = new Set<NodeJS.Timeout>();
  const readers: SseReader[] = [];

  const heartbeat = async (ref: PoolRef, overrides: Record<string, unknown> = {}) => {
    const response = await postJson(url, registrationFor(ref, overrides));
    expect(response.status, await response.clone().text()).toBe(200);
  };

  let stopped: Promise<void> | undefined;
  const mcs: McsService = {
    ...service,
    url,
    port: service.port,
    fake,
    source,
    leaseMs,
    backoff,
    heartbeat,
    keepBeating(refs) {
      // A PoolRelay: heartbeats at a fraction of the lease; a failed one is retried at the next tick.
      const beat = () => void Promise.all(refs.map((ref) => heartbeat(ref))).catch(() => {});
      beat();
      const timer = setInterval(beat, Math.max(20, Math.floor(leaseMs / 4)));
      beaters.add(timer);
      return () => {
        clearInterval(timer);
        beaters.delete(timer);
      };
    },
    pools: () => listPools(url),
    async debug() {
      return (await (await fetch(`${url}/debug/pools`)).json()) as DebugList;
    },
    async debugPool(key) {
      const response = await fetch(`${url}/debug/pools/${key}`);
      expect(response.status).toBe(200);
      return (await response.json()) as DebugPool;
    },
    stateOf(key) {
      return join.directory.get(key)?.getSnapshot().value as string | undefined;
    },
    async watch() {
      const reader = await SseReader.open(`${url}/pools/watch`);
      readers.push(reader);
      return reader;
    },
    warningsFor(key) {
      return logs.warnings().filter((line) => line.pool === key);
    },
    stop() {
      return (stopped ??= (async () => {
        for (const timer of beaters) clearInterval(timer);
        beaters.clear();
        backoff.release();
        await Promise.all(readers.map((reader) => reader.close()));
        await service.stop();
        await fake.close();
      })());
    },
  };
  running.push(mcs);
  return mcs;
}

/** Names of the listed pools, in the order GET /pools gives them. */
export async function listedNames(service: McsService): Promise<string[]> {
  return (await service.pools()).pools.map((pool) => `${pool.cluster_id}/${pool.namespace}/${pool.name}`);
}

/** Every pool's state as /debug/pools shows it. */
export async function debugStates(service: McsService): Promise<Record<string, string>> {
  return Object.fromEntries((await service.debug()).pools.map((pool) => [pool.pool, pool.state]));
}
