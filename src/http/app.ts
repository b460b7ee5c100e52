// The Hono app: every route of docs/contract.md §5, one error renderer. No socket here (server.ts listens),
// so tests drive it with app.request().
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';

import type { Join } from '../join/join.js';
import type { ServiceMetrics } from '../metrics/metrics.js';
import { metricsRoutes } from '../metrics/routes.js';
import { openApiRoutes } from '../openapi/routes.js';
import type { RegistrationStore } from '../store/types.js';
import { debugPageRoutes, debugRoutes, type DebugPageDeps } from './debug.js';
import { accessGuard, type AccessGuardOptions } from './auth.js';
import { ApiError, errorResponse } from './errors.js';
import { heartbeatFastPath, type HeartbeatDeps } from './heartbeat.js';
import { opsRoutes } from './ops.js';
import { poolsRoutes } from './pools.js';
import type { WatchDropReason, WatchLimits, WatchStats } from './watch-hub.js';

export interface AppDeps {
  join: Join;
  store: RegistrationStore;
  logger: Logger;
  leaseMs: number;
  heartbeatIntervalMs: number;
  /** Write and read tokens (docs/contract.md §8); none: every route is open. */
  auth?: Pick<AccessGuardOptions, 'write' | 'read'>;
  /** SSE keep-alive comment period (default 15 s, the contract's bound). */
  keepAliveMs?: number;
  onHeartbeat?: HeartbeatDeps['onOutcome'];
  onSubscribers?: (count: number) => void;
  /** `--max-watchers` and `--watch-max-backlog-bytes` (docs/contract.md §8); default DEFAULT_WATCH_LIMITS. */
  watchLimits?: WatchLimits;
  /** Given the watch fan-out once it is built (the metrics read its streams and backlog when scraped). */
  onWatchHub?: (hub: WatchStats) => void;
  onWatchDropped?: (reason: WatchDropReason) => void;
  onWatchRefused?: () => void;
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

export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  // Heartbeats without a token to check are served before Hono (heartbeat.ts, heartbeatFastPath); the
  // route below still answers every heartbeat the fast path leaves, and app.request() in tests.
  if (!deps.auth?.write) {
    fastPaths.set(
      app,
      heartbeatFastPath({
        store: deps.store,
        leaseMs: deps.leaseMs,
        heartbeatIntervalMs: deps.heartbeatIntervalMs,
        onOutcome: deps.onHeartbeat,
        logger: deps.logger,
      }),
    );
  }
  // Without tokens every route is open: no guard runs (it would only pass each request on).
  if (deps.auth?.write || deps.auth?.read) {
    app.use(accessGuard({ ...deps.auth, onWriteRefused: () => deps.onHeartbeat?.('unauthorized') }));
  }
  app.route(
    '/',
    poolsRoutes({
      view: deps.join.view,
      store: deps.store,
      leaseMs: deps.leaseMs,
      heartbeatIntervalMs: deps.heartbeatIntervalMs,
      keepAliveMs: deps.keepAliveMs ?? 15_000,
      onOutcome: deps.onHeartbeat,
      onSubscribers: deps.onSubscribers,
      watchLimits: deps.watchLimits,
      onDropped: deps.onWatchDropped,
      onWatchRefused: deps.onWatchRefused,
      onWatchHub: deps.onWatchHub,
      logger: deps.logger,
      shutdown: deps.shutdown,
    }),
  );
  app.route('/', opsRoutes(deps.join));
  app.route('/', debugRoutes(deps.join));
  if (deps.debugPage) {
    app.route('/', debugPageRoutes({ ...deps.debugPage, keepAliveMs: deps.keepAliveMs, shutdown: deps.shutdown }));
  }
  if (deps.metrics) app.route('/', metricsRoutes(deps.metrics));
  app.route('/', openApiRoutes());
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
