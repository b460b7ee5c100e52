// The service in-process, the one way tests start it: built by the composition root of `serve`
// (src/service: the store, the followed regions and the slice source a ServeConfig names, assembled with
// the Observability facade), with the parts a test wants to hold instead (its own store, a slice source
// it feeds) swapped in. `socket: false` opens no port: the test drives `app` with `app.request()`.
// Otherwise it listens on 127.0.0.1 (a free port unless given), TLS when the configuration names a
// certificate. The binary itself (`startServe`) is driven by the end-to-end tests (test/support/process.ts).
import type { Hono } from 'hono';
import { listen, type RunningServer } from '../../src/http/server.js';
import type { RouterRegistration } from '../../src/contract/index.js';
import type { Join } from '../../src/join/join.js';
import type { RouterJoin } from '../../src/join/router-join.js';
import { DEFAULT_CONFIG, type ServeConfig } from '../../src/service/config.js';
import { Observability, type ObservabilityOptions } from '../../src/service/observability.js';
import { buildService, type ServiceParts as BuildParts } from '../../src/service/start.js';
import type { RegistrationStore } from '../../src/store/types.js';
import { captureLogs, type CapturedLogs } from './logs.js';

/** What a test may hold instead of what the configuration names (src/service ServiceParts), and more. */
export interface ServiceParts extends Omit<BuildParts, 'observability'> {
  /** Default: no process metrics, the /debug feed flushed every 50 ms. */
  observability?: ObservabilityOptions;
  /** Where every part logs (default: a new capture at debug). */
  logs?: CapturedLogs;
  /** false: open no port, drive `app` with `app.request()` (default true). */
  socket?: boolean;
}

/** Configuration as `serve` flags give it (the lease's third is the heartbeat interval unless given), and the parts. */
export type ServiceOptions = Partial<ServeConfig> & ServiceParts;

export interface TestService {
  app: Hono;
  join: Join;
  store: RegistrationStore;
  /** The routers' join (docs/contract.md §10) and its store of router leases. */
  routers: RouterJoin;
  routerStore: RegistrationStore<RouterRegistration>;
  observability: Observability;
  logs: CapturedLogs;
  /** http(s)://127.0.0.1:<port>; only with a socket. */
  readonly url: string;
  readonly port: number;
  /** End watch streams, close the socket, stop the join and close the stores; once. */
  stop(): Promise<void>;
}

/** Start the service; `port` 0 picks a free one (a test restarting a replica passes the port it had). */
export async function startService(options: ServiceOptions = {}, port = 0): Promise<TestService> {
  const { store, routerStore, slices, join, authTokens, readTokens, clientScopes, tokenPollMs, keepAliveMs, observability: observabilityOptions, logs = captureLogs(), socket = true, ...flags } = options;
  const leaseMs = flags.leaseMs ?? DEFAULT_CONFIG.leaseMs;
  const config: ServeConfig = {
    ...DEFAULT_CONFIG,
    listen: { host: '127.0.0.1', port },
    heartbeatIntervalMs: Math.floor(leaseMs / 3),
    ...flags,
  };
  const observability = new Observability({ processMetrics: false, debugFlushMs: 50, ...observabilityOptions });
  const service = await buildService(config, logs.logger, {
    store,
    routerStore,
    slices,
    // Sweeps every 50 ms unless the test says otherwise: lapses land soon after short test leases.
    join: { sweepIntervalMs: 50, ...join },
    authTokens,
    readTokens,
    clientScopes,
    tokenPollMs,
    keepAliveMs,
    observability,
  });
  service.start();
  let server: RunningServer | undefined;
  if (socket) {
    try {
      const tls =
        config.tlsCertPath && config.tlsKeyPath
          ? { certPath: config.tlsCertPath, keyPath: config.tlsKeyPath, clientCaPath: config.tlsClientCaPath }
          : undefined;
      server = await listen({ app: service.app, host: config.listen.host, port: config.listen.port, tls });
    } catch (error) {
      await service.stop();
      throw error;
    }
  }
  const listening = (): RunningServer => {
    if (!server) throw new Error('started with socket: false: drive it with app.request()');
    return server;
  };
  let stopping: Promise<void> | undefined;
  return {
    app: service.app,
    join: service.join,
    routers: service.routers,
    routerStore: service.routerStore,
    store: service.store,
    observability: service.observability,
    logs,
    get url() {
      return listening().url;
    },
    get port() {
      return listening().address.port;
    },
    stop: () =>
      (stopping ??= (async () => {
        service.endStreams();
        await server?.close(500);
        await service.stop();
      })()),
  };
}

// bench/lib/replicas.ts imports the registration builder from here.
export { registration } from './registration.js';
