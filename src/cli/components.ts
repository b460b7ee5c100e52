// Builds the store and the EndpointSlice source a ServeConfig names.
import type { Logger } from 'pino';
import type { SliceSource } from '../kube/types.js';
import { createMemoryStore } from '../store/memory.js';
import type { RegistrationStore } from '../store/types.js';
import type { ServeConfig } from './config.js';

export async function createStoreFor(config: ServeConfig, _logger: Logger): Promise<RegistrationStore> {
  if (config.registrationStorage === 'memory') return createMemoryStore({ leaseMs: config.leaseMs });
  throw new Error('--registration-storage redis: not wired yet');
}

export async function createSliceSourceFor(config: ServeConfig, _logger: Logger): Promise<SliceSource | undefined> {
  if (config.poolDiscovery === 'registrations') return undefined;
  throw new Error(`--pool-discovery ${config.poolDiscovery}: not wired yet`);
}
