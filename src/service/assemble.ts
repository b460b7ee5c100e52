// Store, sources, join, observability and the Hono app, put together the one way the service runs:
// `serve` calls it with its parsed flags, tests with a memory or Redis store and a slice source they feed.
// No socket here (server.ts listens), so a caller chooses how to serve `app`.
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { Observability, type ObservabilityOptions } from './observability.js';
import { createApp, type AppDeps } from '../http/app.js';
import type { RouterRegistration } from '../contract/index.js';
import { Join, type JoinOptions } from '../join/join.js';
import { RouterJoin, type KnownRouter, type RouterJoinRegions } from '../join/router-join.js';
import type { SliceSource } from '../kube/types.js';
import type { RegistrationStore } from '../store/types.js';

export interface AssembleOptions {
  /** The store as built; it is instrumented here (metrics, the /debug lease countdown). */
  store: RegistrationStore;
  slices?: SliceSource;
  logger: Logger;
  /** Everything the join takes besides what is assembled here (the followed regions' stores included). */
  join: Omit<JoinOptions, 'store' | 'slices' | 'logger' | 'onWarning' | 'inspect' | 'onRegionDropped' | 'onStoreOutage' | 'onSliceLoopRestart'>;
  heartbeatIntervalMs: number;
  /** Router leases (the home store and the followed regions') and the static routers (docs/contract.md §10). */
  routers: {
    store: RegistrationStore<RouterRegistration>;
    regions?: RouterJoinRegions;
    staticRouters?: readonly KnownRouter[];
    /** Routers come from the Global Router Service's slices too (mcs/karmada). */
    mcs?: boolean;
  };
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
  /** The routers' join: their leases, static and MCS routers, and the listed view. */
  routers: RouterJoin;
  routerStore: RegistrationStore<RouterRegistration>;
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
  const { join: joinOptions } = options;
  const routers = new RouterJoin({
    leaseMs: joinOptions.leaseMs,
    store: options.routers.store,
    regions: options.routers.regions,
    staticRouters: options.routers.staticRouters,
    mcs: options.routers.mcs,
    logger: options.logger,
    now: joinOptions.now,
    sweepIntervalMs: joinOptions.sweepIntervalMs,
    dueGraceMs: joinOptions.dueGraceMs,
    storeBackoff: joinOptions.storeBackoff,
  });
  observability.metrics.observeRouters(routers);
  join.followRouters({ routers: (list) => routers.setMcsRouters(list), status: (synced, reason) => routers.setMcsStatus(synced, reason) });
  const shutdown = new AbortController();
  const app = createApp({
    join,
    store,
    routers: { join: routers, store: options.routers.store },
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
    routers,
    routerStore: options.routers.store,
    store,
    observability,
    start: () => {
      join.start();
      routers.start();
    },
    endStreams: () => shutdown.abort(),
    async stop() {
      shutdown.abort();
      await Promise.all([join.stop(), routers.stop()]);
      observability.stop();
      await Promise.all([
        store.close(),
        options.routers.store.close(),
        ...(options.join.regions?.followed ?? []).map((r) => r.store.close()),
        ...(options.routers.regions?.followed ?? []).map((r) => r.store.close()),
      ]);
    },
  };
}
