// `poolscope serve`: wires the store, the sources, the join and the HTTP app from a parsed ServeConfig,
// logs one line at start, and on SIGTERM/SIGINT drains (ends watch streams, closes connections, stops
// the sources, closes the store) and exits 0.
import { readFile } from 'node:fs/promises';
import { pino, type Logger } from 'pino';
import { Observability } from '../debug/observability.js';
import { parseTokenFile } from '../http/auth.js';
import { listen, type RunningServer } from '../http/server.js';
import type { Join } from '../join/join.js';
import { assembleService } from './assemble.js';
import type { ServeConfig } from './config.js';
import { createSliceSourceFor, createStoreFor } from './components.js';

export interface ServeHandle {
  server: RunningServer;
  join: Join;
  /** Drain and stop; resolves when everything is closed. */
  stop(): Promise<void>;
}

/** Start the service (used by the CLI and by tests that want it in-process). */
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

export async function runServe(config: ServeConfig): Promise<number> {
  const logger = pino({ name: 'poolscope', level: process.env.POOLSCOPE_LOG_LEVEL ?? 'info' });
  let handle: ServeHandle;
  try {
    handle = await startServe(config, logger);
  } catch (error) {
    logger.error({ err: error }, 'poolscope could not start');
    return 1;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ signal }, 'draining');
  await handle.stop();
  logger.info('stopped');
  return 0;
}
