// The service's configuration: what `poolscope serve` flags (docs/contract.md §6) parse into, and what the
// composition root builds the service from.
import type { PoolDiscovery } from '../contract/index.js';

export type RegistrationStorage = 'memory' | 'redis';

export interface ServeConfig {
  /** host and port to listen on, from `--listen host:port` ([::1]:8080 for IPv6). */
  listen: { host: string; port: number };
  poolDiscovery: PoolDiscovery;
  registrationStorage: RegistrationStorage;
  /** redis only */
  redisUrl: string | undefined;
  redisPrefix: string;
  redisCommandTimeoutMs: number;
  heartbeatIntervalMs: number;
  leaseMs: number;
  /** mcs/karmada only */
  relayServiceSuffix: string;
  frontendServiceSuffix: string;
  frontendPortName: string;
  /** mcs/karmada only: narrow the EndpointSlice watch to one namespace (all namespaces when undefined). */
  namespace: string | undefined;
  tlsCertPath: string | undefined;
  tlsKeyPath: string | undefined;
  authTokenFile: string | undefined;
}

export const DEFAULT_CONFIG: ServeConfig = {
  listen: { host: '0.0.0.0', port: 8080 },
  poolDiscovery: 'registrations',
  registrationStorage: 'memory',
  redisUrl: undefined,
  redisPrefix: 'poolscope',
  redisCommandTimeoutMs: 1000,
  heartbeatIntervalMs: 5000,
  leaseMs: 15000,
  relayServiceSuffix: '-pool-relay',
  frontendServiceSuffix: '-frontend',
  frontendPortName: 'http',
  namespace: undefined,
  tlsCertPath: undefined,
  tlsKeyPath: undefined,
  authTokenFile: undefined,
};
