// Builds what a ServeConfig names: the store this replica writes to, the stores of the regions it
// follows (docs/contract.md §7), and the EndpointSlice source. The Redis store (ioredis) and the Kubernetes
// client are imported only when the configuration names them: a memory-store replica starts without
// either (docs/operations.md "Start-up").
import type { Logger } from 'pino';
import type { RouterRegistration } from '../contract/index.js';
import type { JoinRegions } from '../join/join.js';
import type { RouterJoinRegions } from '../join/router-join.js';
import type { SliceSource } from '../kube/index.js';
import { createMemoryRouterStore, createMemoryStore } from '../store/memory.js';
import type { RegistrationStore } from '../store/types.js';
import type { ServeConfig } from './config.js';
import { StartupError } from './startup-error.js';

/** The store heartbeats go to: the home region's Redis with regions, else `--registration-storage`. */
export async function createStoreFor(config: ServeConfig, logger: Logger): Promise<RegistrationStore> {
  if (config.registrationStorage === 'memory' && config.region === undefined) return createMemoryStore({ leaseMs: config.leaseMs });
  const { createRedisStore } = await import('../store/redis/index.js');
  const home = config.regions.find((r) => r.name === config.region);
  if (home) {
    return createRedisStore({
      url: home.redisUrl,
      prefix: home.prefix,
      leaseMs: config.leaseMs,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
      commandTimeoutMs: home.commandTimeoutMs,
      logger: logger.child({ component: 'redis-store', region: home.name }),
    });
  }
  if (config.registrationStorage === 'memory') return createMemoryStore({ leaseMs: config.leaseMs });
  if (!config.redisUrl) throw new Error('--redis-url: required by --registration-storage redis');
  return createRedisStore({
    url: config.redisUrl,
    prefix: config.redisPrefix,
    leaseMs: config.leaseMs,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    commandTimeoutMs: config.redisCommandTimeoutMs,
    logger: logger.child({ component: 'redis-store' }),
  });
}

/**
 * The router leases heartbeats of POST /routers go to (docs/contract.md §10): the same Redis as the pools'
 * (the home region's with regions), under keys of their own; in memory with the memory store.
 */
export async function createRouterStoreFor(config: ServeConfig, logger: Logger): Promise<RegistrationStore<RouterRegistration>> {
  const home = config.regions.find((r) => r.name === config.region);
  const redis = home
    ? { url: home.redisUrl, prefix: home.prefix, commandTimeoutMs: home.commandTimeoutMs }
    : config.registrationStorage === 'redis' && config.redisUrl
      ? { url: config.redisUrl, prefix: config.redisPrefix, commandTimeoutMs: config.redisCommandTimeoutMs }
      : undefined;
  if (!redis) return createMemoryRouterStore({ leaseMs: config.leaseMs });
  const { createRedisRouterStore } = await import('../store/redis/index.js');
  return createRedisRouterStore({
    ...redis,
    leaseMs: config.leaseMs,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    logger: logger.child({ component: 'redis-router-store', ...(home ? { region: home.name } : {}) }),
  });
}

/** Every other region's router leases, each followed read-only (as its pools are); undefined without regions. */
export async function createFollowedRouterRegionsFor(config: ServeConfig, logger: Logger): Promise<RouterJoinRegions | undefined> {
  if (config.region === undefined || config.regions.length === 0) return undefined;
  const { createRedisReader } = await import('../store/redis/index.js');
  return {
    home: config.region,
    holdMs: config.regionHoldMs ?? 4 * config.leaseMs,
    followed: config.regions
      .filter((r) => r.name !== config.region)
      .map((r) => ({
        name: r.name,
        store: createRedisReader({
          url: r.redisUrl,
          prefix: r.prefix,
          kind: 'routers',
          commandTimeoutMs: r.commandTimeoutMs,
          leaseMs: config.leaseMs,
          logger: logger.child({ component: 'redis-router-reader', region: r.name }),
        }),
      })),
  };
}

/** Every other region of the regions file, each followed read-only; undefined without regions. */
export async function createFollowedRegionsFor(config: ServeConfig, logger: Logger): Promise<JoinRegions | undefined> {
  if (config.region === undefined || config.regions.length === 0) return undefined;
  const { createRedisReader } = await import('../store/redis/index.js');
  return {
    home: config.region,
    holdMs: config.regionHoldMs ?? 4 * config.leaseMs,
    followed: config.regions
      .filter((r) => r.name !== config.region)
      .map((r) => ({
        name: r.name,
        store: createRedisReader({
          url: r.redisUrl,
          prefix: r.prefix,
          commandTimeoutMs: r.commandTimeoutMs,
          leaseMs: config.leaseMs,
          logger: logger.child({ component: 'redis-reader', region: r.name }),
        }),
      })),
  };
}

/** The EndpointSlice source of mcs/karmada modes, on the default kubeconfig loading (KUBECONFIG, in-cluster). */
export async function createSliceSourceFor(
  config: ServeConfig,
  logger: Logger,
  onWarning?: (kind: 'frontend_slice_without_port') => void,
): Promise<SliceSource | undefined> {
  if (config.poolDiscovery === 'registrations') return undefined;
  // Loaded only here: @kubernetes/client-node costs seconds of start-up CPU that registrations mode skips.
  const { createSliceSource, KubeConfigError, kubeConfigFor } = await import('../kube/index.js');
  let kubeConfig;
  try {
    kubeConfig = kubeConfigFor();
  } catch (error) {
    if (!(error instanceof KubeConfigError)) throw error;
    throw new StartupError('--pool-discovery', `${config.poolDiscovery} reads EndpointSlices from a Kubernetes API: ${error.message}`, { cause: error });
  }
  return createSliceSource({
    kubeConfig,
    mode: config.poolDiscovery,
    relayServiceSuffix: config.relayServiceSuffix,
    frontendServiceSuffix: config.frontendServiceSuffix,
    frontendPortName: config.frontendPortName,
    routerServiceName: config.routerServiceName,
    routerPortName: config.routerPortName,
    namespace: config.namespace,
    logger: logger.child({ component: 'endpointslices' }),
    onWarning,
  });
}
