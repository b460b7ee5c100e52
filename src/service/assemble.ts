// Store, sources, join, observability and the Hono app, put together the one way the service runs:
// `serve` calls it with its parsed flags, tests with a memory or Redis store and a slice source they feed.
// No socket here (server.ts listens), so a caller chooses how to serve `app`.
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { Observability, type ObservabilityOptions } from './observability.js';
import { createApp, type AppDeps } from '../http/app.js';
import { Join, type JoinOptions } from '../join/join.js';
import type { SliceSource } from '../kube/types.js';
import type { RegistrationStore } from '../store/types.js';

export interface AssembleOptions {
  /** The store as built; it is instrumented here (metrics, the /debug lease countdown). */
  store: RegistrationStore;
  slices?: SliceSource;
  logger: Logger;
  /** Everything the join takes besides what is assembled here (the followed regions' stores included). */
  join: Omit<JoinOptions, 'store' | 'slices' | 'logger' | 'onWarning' | 'inspect' | 'onRegionDropped' | 'onSliceLoopRestart'>;
  heartbeatIntervalMs: number;
  /** Write and read tokens (docs/contract.md §8); none: every route is open. */
  auth?: AppDeps['auth'];
  /** SSE keep-alive period (default 15 s). */
  keepAliveMs?: number;
  /** `--max-watchers`, `--watch-max-backlog-bytes` (default DEFAULT_WATCH_LIMITS). */
  watchLimits?: AppDeps['watchLimits'];
  /** A caller that needs the facade before the store exists (to count slice warnings) passes its own. */
  observability?: Observability;
  observabilityOptions?: ObservabilityOptions;
}

export interface AssembledService {
  app: Hono;
  join: Join;
  store: RegistrationStore;
  observability: Observability;
  /** Start following the store and the sources. */
  start(): void;
  /** End watch streams (before the server closes), stop the join and the facade, close the store. */
  stop(): Promise<void>;
  /** Only the first part of stop(): watch streams end so the server's connections can close. */
  endStreams(): void;
}

export function assembleService(options: AssembleOptions): AssembledService {
  const observability = options.observability ?? new Observability(options.observabilityOptions);
  const store = observability.instrument(options.store);
  const join = new Join({
    ...options.join,
    store,
    slices: options.slices,
    logger: options.logger,
    ...observability.joinHooks,
  });
  observability.attach(join);
  const shutdown = new AbortController();
  const app = createApp({
    join,
    store,
    logger: options.logger,
    leaseMs: options.join.leaseMs,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    auth: options.auth,
    keepAliveMs: options.keepAliveMs,
    watchLimits: options.watchLimits,
    shutdown: shutdown.signal,
    ...observability.appDeps(),
  });
  return {
    app,
    join,
    store,
    observability,
    start: () => join.start(),
    endStreams: () => shutdown.abort(),
    async stop() {
      shutdown.abort();
      await join.stop();
      observability.stop();
      await Promise.all([store.close(), ...(options.join.regions?.followed ?? []).map((r) => r.store.close())]);
    },
  };
}
