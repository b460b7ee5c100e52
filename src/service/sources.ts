// Builds what a ServeConfig names: the store this replica writes to, the stores of the regions it
// follows (docs/contract.md §7), and the EndpointSlice source.
import type { Logger } from 'pino';
import type { JoinRegions } from '../join/join.js';
import type { SliceSource } from '../kube/index.js';
import { createMemoryStore } from '../store/memory.js';
import { createRedisReader, createRedisStore } from '../store/redis/index.js';
import type { RegistrationStore } from '../store/types.js';
import type { ServeConfig } from './config.js';

/** The store heartbeats go to: the home region's Redis with regions, else `--registration-storage`. */
export async function createStoreFor(config: ServeConfig, logger: Logger): Promise<RegistrationStore> {
  const home = config.regions.find((r) => r.name === config.region);
  if (home) {
    return createRedisStore({
      url: home.redisUrl,
      prefix: home.prefix,
      leaseMs: config.leaseMs,
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
    commandTimeoutMs: config.redisCommandTimeoutMs,
    logger: logger.child({ component: 'redis-store' }),
  });
}

/** Every other region of the regions file, each followed read-only; undefined without regions. */
export function createFollowedRegionsFor(config: ServeConfig, logger: Logger): JoinRegions | undefined {
  if (config.region === undefined || config.regions.length === 0) return undefined;
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
  const { createSliceSource, kubeConfigFor } = await import('../kube/index.js');
  return createSliceSource({
    kubeConfig: kubeConfigFor(),
    mode: config.poolDiscovery,
    relayServiceSuffix: config.relayServiceSuffix,
    frontendServiceSuffix: config.frontendServiceSuffix,
    frontendPortName: config.frontendPortName,
    namespace: config.namespace,
    logger: logger.child({ component: 'endpointslices' }),
    onWarning,
  });
}
