// The service's configuration: what `poolscope serve` flags (docs/contract.md §6) parse into, and what the
// composition root builds the service from.
import type { LevelWithSilent } from 'pino';
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
  /** `--read-token-file`: tokens for the read routes (docs/contract.md §8); needs `authTokenFile`. */
  readTokenFile: string | undefined;
  /** `--tls-client-ca-path`: every connection must present a client certificate signed by this CA. */
  tlsClientCaPath: string | undefined;
  /** `--tls-client-scopes-file`: what each client certificate may write (docs/contract.md §8); needs `tlsClientCaPath`. */
  tlsClientScopesFile: string | undefined;
  /** `--max-connections`: connections open at once; beyond it a new one is closed at once (docs/contract.md §8). */
  maxConnections: number;
  /** `--max-watchers`: GET /pools/watch streams open at once; beyond it 503 too_many_watchers. */
  maxWatchers: number;
  /** `--watch-max-backlog-bytes`: a watch stream whose unsent bytes pass this is cut. */
  watchMaxBacklogBytes: number;
  /** The home region of `--region` (docs/contract.md §7); undefined without regions. */
  region: string | undefined;
  /** Every region of `--regions-file`, sorted by name; empty without regions. */
  regions: RegionConfig[];
  /** `--region-hold-secs` in ms, 4 × the lease unless given; undefined without regions. */
  regionHoldMs: number | undefined;
  /** `--router id=url`, repeatable: routers always listed, without a lease (docs/contract.md §10). */
  staticRouters: { id: string; url: string }[];
  /** mcs/karmada only: the imported Global Router Service whose Ready endpoints are routers. */
  routerServiceName: string;
  /** mcs/karmada only: the TCP port of that Service's slices that routers listen on. */
  routerPortName: string;
  /** `--log-level` (POOLSCOPE_LOG_LEVEL): the level of the logger `poolscope serve` hands the service. */
  logLevel: LevelWithSilent;
}

/** One region of the regions file (docs/contract.md §7), its defaults filled in. */
export interface RegionConfig {
  name: string;
  redisUrl: string;
  prefix: string;
  commandTimeoutMs: number;
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
  readTokenFile: undefined,
  tlsClientCaPath: undefined,
  tlsClientScopesFile: undefined,
  maxConnections: 10_000,
  maxWatchers: 10_000,
  watchMaxBacklogBytes: 4 * 1024 * 1024,
  region: undefined,
  regions: [],
  regionHoldMs: undefined,
  staticRouters: [],
  routerServiceName: 'global-router',
  routerPortName: 'relay',
  logLevel: 'info',
};
