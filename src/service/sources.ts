// Builds the store and the EndpointSlice source a ServeConfig names.
import type { Logger } from 'pino';
import type { SliceSource } from '../kube/index.js';
import { createMemoryStore } from '../store/memory.js';
import { createRedisStore } from '../store/redis/index.js';
import type { RegistrationStore } from '../store/types.js';
import type { ServeConfig } from './config.js';

export async function createStoreFor(config: ServeConfig, logger: Logger): Promise<RegistrationStore> {
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
