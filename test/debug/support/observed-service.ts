// An in-process poolscope wired like `serve` (the Observability facade: metrics, inspection, the /debug
// feed and page) on a real socket, with a memory store and, for MCS modes, a slice source the test feeds.
import type { Hono } from 'hono';
import { Observability } from '../../../src/debug/observability.js';
import { createApp } from '../../../src/http/app.js';
import { listen, type RunningServer } from '../../../src/http/server.js';
import { Join } from '../../../src/join/join.js';
import type { PoolDiscovery } from '../../../src/cli/config.js';
import type { SliceSource } from '../../../src/kube/types.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { captureLogs, type CapturedLogs } from '../../support/logs.js';

export interface ObservedService {
  app: Hono;
  join: Join;
  observability: Observability;
  logs: CapturedLogs;
  server: RunningServer;
  url: string;
  stop(): Promise<void>;
}

export interface ObservedServiceOptions {
  leaseMs: number;
  poolDiscovery?: PoolDiscovery;
  slices?: SliceSource;
  keepAliveMs?: number;
  /** How long a pool that left stays (default: the join's ten minutes). */
  retentionMs?: number;
}

export async function startObservedService(options: ObservedServiceOptions): Promise<ObservedService> {
  const logs = captureLogs();
  const observability = new Observability({ debugFlushMs: 50 });
  const store = observability.instrument(createMemoryStore({ leaseMs: options.leaseMs }));
  const join = new Join({
    poolDiscovery: options.poolDiscovery ?? 'registrations',
    leaseMs: options.leaseMs,
    store,
    slices: options.slices,
    logger: logs.logger,
    sweepIntervalMs: 50,
    retentionMs: options.retentionMs,
    ...observability.joinHooks,
  });
  observability.attach(join);
  const shutdown = new AbortController();
  const app = createApp({
    join,
    store,
    logger: logs.logger,
    leaseMs: options.leaseMs,
    heartbeatIntervalMs: Math.floor(options.leaseMs / 3),
    keepAliveMs: options.keepAliveMs,
    shutdown: shutdown.signal,
    ...observability.appDeps(),
  });
  join.start();
  const server = await listen({ app, host: '127.0.0.1', port: 0 });
  return {
    app,
    join,
    observability,
    logs,
    server,
    url: server.url,
    async stop() {
      shutdown.abort();
      await server.close(500);
      await join.stop();
      observability.stop();
      await store.close();
    },
  };
}
