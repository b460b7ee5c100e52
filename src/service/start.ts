// The service running from a ServeConfig: the store and the sources it names, assembled, listening, with
// one log line at start and a drain (watch streams, connections, sources, store) on stop. `poolscope serve`
// runs it until a signal; tests and benchmarks start it in-process.
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { parseTokenFile } from '../http/auth.js';
import { listen, type RunningServer } from '../http/server.js';
import type { Join } from '../join/join.js';
import { assembleService } from './assemble.js';
import type { ServeConfig } from './config.js';
import { Observability } from './observability.js';
import { createFollowedRegionsFor, createSliceSourceFor, createStoreFor } from './sources.js';

export interface ServeHandle {
  server: RunningServer;
  join: Join;
  /** Drain and stop; resolves when everything is closed. */
  stop(): Promise<void>;
}

/** Start the service (used by `poolscope serve` and by tests and benchmarks that want it in-process). */
export async function startServe(config: ServeConfig, logger: Logger): Promise<ServeHandle> {
  const authTokens = config.authTokenFile ? parseTokenFile(await readFile(config.authTokenFile, 'utf8')) : undefined;
  const observability = new Observability();
  // The slice source first: it fails fast (no kubeconfig) before any connection to the store is opened.
  const slices = await createSliceSourceFor(config, logger, observability.metrics.countWarning);
  const service = assembleService({
    store: await createStoreFor(config, logger),
    slices,
    logger,
    observability,
    join: {
      regions: createFollowedRegionsFor(config, logger),
      poolDiscovery: config.poolDiscovery,
      leaseMs: config.leaseMs,
      frontendServiceSuffix: config.frontendServiceSuffix,
      frontendPortName: config.frontendPortName,
    },
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    authTokens,
  });
  const { join } = service;
  service.start();
  let server: RunningServer;
  try {
    server = await listen({
      app: service.app,
      host: config.listen.host,
      port: config.listen.port,
      tls: config.tlsCertPath && config.tlsKeyPath ? { certPath: config.tlsCertPath, keyPath: config.tlsKeyPath } : undefined,
    });
  } catch (error) {
    await service.stop();
    throw error;
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
    stop: () =>
      (stopping ??= (async () => {
        service.endStreams();
        await server.close();
        await service.stop();
      })()),
  };
}
