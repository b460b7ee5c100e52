// The Hono app: every route of docs/contract.md §5, one error renderer. No socket here (server.ts listens),
// so tests drive it with app.request().
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';

import type { PoolKey, RouterRegistration } from '../contract/index.js';
import type { Join } from '../join/join.js';
import type { RouterJoin } from '../join/router-join.js';
import type { ServiceMetrics } from '../metrics/metrics.js';
import { metricsOperations, metricsRoutes } from '../metrics/routes.js';
import { openApiOperations, openApiRoutes } from '../openapi/routes.js';
import type { RegistrationStore } from '../store/types.js';
import { debugOperations, debugPageRoutes, debugRoutes, type DebugPageDeps } from './debug.js';
import { accessGuard, type AccessGuardOptions } from './auth.js';
import { ApiError, errorResponse } from './errors.js';
import { heartbeatFastPath, type HeartbeatDeps } from './heartbeat.js';
import { opsOperations, opsRoutes } from './ops.js';
import { poolsOperations, poolsRoutes } from './pools.js';
import { routersOperations, routersRoutes } from './routers.js';
import type { WatchStreamName } from '../metrics/limit-metrics.js';
import { DEFAULT_WATCH_LIMITS, StreamGate, type StreamHooks, type WatchLimits } from './stream-gate.js';
import type { WatchStats } from './watch-hub.js';
import { WriteAuthority } from './write-authority.js';

export interface AppDeps {
  join: Join;
  store: RegistrationStore;
  /** The routers' join and the home store of router leases (docs/contract.md §10); without them no /routers route is mounted. */
  routers?: { join: RouterJoin; store: RegistrationStore<RouterRegistration> };
  logger: Logger;
  leaseMs: number;
  heartbeatIntervalMs: number;
  /** Write and read tokens, client certificate scopes (docs/contract.md §8); none: every route is open. */
  auth?: Pick<AccessGuardOptions, 'write' | 'read' | 'certificateScopes'>;
  /** SSE keep-alive comment period (default 15 s, the contract's bound). */
  keepAliveMs?: number;
  onHeartbeat?: HeartbeatDeps['onOutcome'];
  onSubscribers?: (count: number) => void;
  /** `--max-watchers` and `--watch-max-backlog-bytes` (docs/contract.md §8); default DEFAULT_WATCH_LIMITS. */
  watchLimits?: WatchLimits;
  /** Given the streams of each kind once built (the metrics read their count and backlog when scraped). */
  onWatchHub?: (streams: WatchStats, stream: WatchStreamName) => void;
  onWatchDropped?: StreamHooks['onDropped'];
  onWatchRefused?: StreamHooks['onRefused'];
  /** Aborted when the server drains (ends every watch stream). */
  shutdown?: AbortSignal;
  /** GET /metrics (not mounted without it). */
  metrics?: ServiceMetrics;
  /** GET /debug, the page and its feed (not mounted without it). */
  debugPage?: Pick<DebugPageDeps, 'feed' | 'bundle'>;
}

/** A handler that may take a request on Node's objects before Hono does; returns whether it took it. */
export type NodeFastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The fast path createApp built beside each app, for listen() (server.ts) to put before Hono's listener. */
const fastPaths = new WeakMap<Hono, NodeFastPath>();

/** The Node-level fast path of an app createApp built (POST /pools without write tokens), if any. */
export function nodeFastPathOf(app: Hono): NodeFastPath | undefined {
  return fastPaths.get(app);
}

/** Every operation of the service, for the OpenAPI document: a route module's list per module. */
export const API_OPERATIONS = [...poolsOperations, ...routersOperations, ...opsOperations, ...debugOperations, ...metricsOperations, ...openApiOperations];

export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  // Every route module is mounted at the root: its routes carry their whole paths.
  // Stryker disable next-line StringLiteral: equivalent, Hono mounts at '' exactly what it mounts at '/'
  const mount = (routes: Hono) => app.route('/', routes);
  // Who may write what: every write token and scoped client certificate is checked against the target.
  const writes = writeAuthority(deps);
  // A change written here is ordered after every version of the pool this replica read, in any region
  // (without regions that is the store's own version, which the store already counts from).
  const knownVersion = (key: PoolKey) => deps.join.knownVersion(key);
  // Heartbeats without a credential to check are served before Hono (heartbeat.ts, heartbeatFastPath); the
  // route below still answers every heartbeat the fast path leaves, and app.request() in tests.
  if (writes === undefined) {
    fastPaths.set(
      app,
      heartbeatFastPath({
        store: deps.store,
        leaseMs: deps.leaseMs,
        heartbeatIntervalMs: deps.heartbeatIntervalMs,
        onOutcome: deps.onHeartbeat,
        logger: deps.logger,
        knownVersion,
      }),
    );
  }
  // Without tokens every route is open: no guard runs (it would only pass each request on).
  if (deps.auth?.write || deps.auth?.read) {
    app.use(accessGuard({ ...deps.auth, onWriteRefused: (path) => (path === '/pools' ? deps.onHeartbeat?.('unauthorized') : undefined) }));
  }
  mount(
    poolsRoutes({
      view: deps.join.view,
      store: deps.store,
      leaseMs: deps.leaseMs,
      heartbeatIntervalMs: deps.heartbeatIntervalMs,
      keepAliveMs: deps.keepAliveMs ?? 15_000,
      onOutcome: deps.onHeartbeat,
      writes,
      knownVersion,
      onSubscribers: deps.onSubscribers,
      watchLimits: deps.watchLimits,
      onDropped: deps.onWatchDropped,
      onWatchRefused: deps.onWatchRefused,
      onWatchHub: deps.onWatchHub,
      logger: deps.logger,
      shutdown: deps.shutdown,
    }),
  );
  if (deps.routers) {
    mount(
      routersRoutes({
        view: deps.routers.join.view,
        store: deps.routers.store,
        leaseMs: deps.leaseMs,
        heartbeatIntervalMs: deps.heartbeatIntervalMs,
        writes,
        keepAliveMs: deps.keepAliveMs ?? 15_000,
        watchLimits: deps.watchLimits,
        shutdown: deps.shutdown,
        logger: deps.logger,
        onDropped: deps.onWatchDropped,
        onWatchRefused: deps.onWatchRefused,
        onWatchHub: deps.onWatchHub,
      }),
    );
  }
  mount(opsRoutes(deps.join));
  mount(debugRoutes(deps.join));
  if (deps.debugPage) {
    const streams = new StreamGate({
      stream: 'debug',
      ...(deps.watchLimits ?? DEFAULT_WATCH_LIMITS),
      logger: deps.logger,
      onDropped: deps.onWatchDropped,
      onRefused: deps.onWatchRefused,
    });
    deps.onWatchHub?.(streams, 'debug');
    mount(debugPageRoutes({ ...deps.debugPage, keepAliveMs: deps.keepAliveMs, shutdown: deps.shutdown, streams }));
  }
  if (deps.metrics) mount(metricsRoutes(deps.metrics));
  // The document describes every operation of the service, whether this app mounts it or not (a test app
  // without the page or metrics still describes the API as it is deployed).
  mount(openApiRoutes({ operations: API_OPERATIONS }));
  app.notFound((c) => errorResponse(404, 'not_found', `no route ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    if (error instanceof ApiError) return c.json(error.body(), error.status);
    if (error instanceof HTTPException) {
      // Hono middleware (bearerAuth) that already built a contract Response.
      return error.getResponse();
    }
    deps.logger.error({ err: error, method: c.req.method, path: c.req.path }, 'request failed');
    return errorResponse(500, 'internal', 'internal error');
  });
  return app;
}

/** The write authority of the app's credentials; undefined when writes carry none (no write tokens, no certificate scopes). */
function writeAuthority(deps: AppDeps): WriteAuthority | undefined {
  const { write, certificateScopes } = deps.auth ?? {};
  if (write === undefined && certificateScopes === undefined) return undefined;
  return new WriteAuthority({ tokenFlag: write && 'auth-token-file', certificates: certificateScopes, logger: deps.logger });
}
