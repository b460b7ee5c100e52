// The service running from a ServeConfig: the store and the sources it names, assembled, listening, with
// one log line at start and a drain (watch streams, connections, sources, store) on stop. `poolscope serve`
// runs it until a signal; tests and benchmarks start it in-process.
import type { Logger } from 'pino';
import { listen, type RunningServer } from '../http/server.js';
import type { Join } from '../join/join.js';
import type { SliceSource } from '../kube/types.js';
import type { RouterRegistration } from '../contract/index.js';
import type { RegistrationStore } from '../store/types.js';
import { assembleService, type AssembledService, type AssembleOptions } from './assemble.js';
import { openAuthTokens, type FixedTokens } from './auth-tokens.js';
import type { ServeConfig } from './config.js';
import { Observability } from './observability.js';
import { refuseSharedRegionStores } from './region-stores.js';
import { createFollowedRegionsFor, createFollowedRouterRegionsFor, createRouterStoreFor, createSliceSourceFor, createStoreFor } from './sources.js';
import { listenError, StartupError } from './startup-error.js';

export { StartupError };

/** What a caller may hold instead of what the configuration names (tests), and knobs `serve` has no flag for. */
export interface ServiceParts extends FixedTokens {
  /** Default: the store the configuration names. */
  store?: RegistrationStore;
  /** Default: the router leases' store the configuration names (the pools' Redis, or memory). */
  routerStore?: RegistrationStore<RouterRegistration>;
  /** Default: the kubeconfig EndpointSlice source of mcs/karmada modes. */
  slices?: SliceSource;
  /** More join options (the followed regions, sweep interval, backoff, clocks). */
  join?: Partial<Omit<AssembleOptions['join'], 'poolDiscovery' | 'leaseMs'>>;
  /** SSE keep-alive period (default 15 s). */
  keepAliveMs?: number;
  /** Default: a new facade with process metrics. */
  observability?: Observability;
}

/**
 * The service a ServeConfig names, assembled but not started and not listening: what `startServe` runs,
 * and what in-process tests drive (with parts of their own swapped in).
 */
export async function buildService(config: ServeConfig, logger: Logger, parts: ServiceParts = {}): Promise<BuiltService> {
  // Token files first: one that holds no usable token refuses the start (docs/contract.md §8).
  const tokens = await openAuthTokens(config, logger, parts);
  try {
    const service = await assembleFromConfig(config, logger, parts, tokens.auth);
    return {
      ...service,
      reloadTokens: tokens.reload,
      stop: async () => {
        tokens.close();
        await service.stop();
      },
    };
  } catch (error) {
    tokens.close();
    throw error;
  }
}

/** An assembled service whose token files are followed (and closed by stop()). */
export interface BuiltService extends AssembledService {
  /** Re-read the token files now (SIGHUP). */
  reloadTokens(): Promise<void>;
}

async function assembleFromConfig(
  config: ServeConfig,
  logger: Logger,
  parts: ServiceParts,
  auth: AssembleOptions['auth'],
): Promise<AssembledService> {
  const observability = parts.observability ?? new Observability();
  // One store per region, judged by what the URLs resolve to (the file's check compares them as written).
  if (config.regions.length > 0) await refuseSharedRegionStores(config.regions);
  // The slice source first: it fails fast (no kubeconfig) before any connection to the store is opened.
  const slices = parts.slices ?? (await createSliceSourceFor(config, logger, observability.metrics.countWarning));
  return assembleService({
    store: parts.store ?? (await createStoreFor(config, logger)),
    slices,
    logger,
    observability,
    join: {
      regions: await createFollowedRegionsFor(config, logger),
      poolDiscovery: config.poolDiscovery,
      leaseMs: config.leaseMs,
      frontendServiceSuffix: config.frontendServiceSuffix,
      frontendPortName: config.frontendPortName,
      ...parts.join,
    },
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    routers: {
      store: parts.routerStore ?? (await createRouterStoreFor(config, logger)),
      regions: await createFollowedRouterRegionsFor(config, logger),
      staticRouters: config.staticRouters,
      mcs: config.poolDiscovery !== 'registrations',
    },
    watchLimits: { maxWatchers: config.maxWatchers, maxBacklogBytes: config.watchMaxBacklogBytes },
    auth,
    keepAliveMs: parts.keepAliveMs,
  });
}

export interface ServeHandle {
  server: RunningServer;
  join: Join;
  /** Re-read the token files now (SIGHUP). */
  reloadTokens(): Promise<void>;
  /** Drain and stop; resolves when everything is closed. */
  stop(): Promise<void>;
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split('\n')[0]!;
}

/**
 * Start the service (used by `poolscope serve` and by tests and benchmarks that want it in-process).
 * @throws StartupError for a failure the operator fixes (a port in use, no Kubernetes API in MCS modes).
 */
export async function startServe(config: ServeConfig, logger: Logger): Promise<ServeHandle> {
  const service = await buildService(config, logger);
  const { join } = service;
  service.start();
  let server: RunningServer;
  try {
    server = await listen({
      app: service.app,
      host: config.listen.host,
      port: config.listen.port,
      limits: { maxConnections: config.maxConnections },
      logger,
      onConnectionRefused: service.observability.metrics.limits.countConnectionRefused,
      tls:
        config.tlsCertPath && config.tlsKeyPath
          ? { certPath: config.tlsCertPath, keyPath: config.tlsKeyPath, clientCaPath: config.tlsClientCaPath }
          : undefined,
    });
  } catch (error) {
    await service.stop();
    const address = config.listen.host.includes(':') ? `[${config.listen.host}]:${config.listen.port}` : `${config.listen.host}:${config.listen.port}`;
    // TLS material is checked with the flags; one that changed since fails here, in OpenSSL's words.
    const tls = (error as NodeJS.ErrnoException).code?.startsWith('ERR_OSSL') ? new StartupError('--tls-key-path', firstLine(error), { cause: error }) : undefined;
    throw listenError(error, address) ?? tls ?? error;
  }
  logger.info(
    {
      listen: server.url,
      pool_discovery: config.poolDiscovery,
      registration_storage: config.registrationStorage,
      ...(config.region !== undefined ? { region: config.region, regions: config.regions.map((r) => r.name) } : {}),
      lease_ms: config.leaseMs,
      heartbeat_interval_ms: config.heartbeatIntervalMs,
    },
    'poolscope serving',
  );
  let stopping: Promise<void> | undefined;
  return {
    server,
    join,
    reloadTokens: service.reloadTokens,
    stop: () =>
      (stopping ??= (async () => {
        service.endStreams();
        await server.close();
        await service.stop();
      })()),
  };
}
