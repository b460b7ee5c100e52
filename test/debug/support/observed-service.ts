// An in-process poolscope wired like `serve` (the Observability facade: metrics, inspection, the /debug
// feed and page) on a real socket, with a memory store and, for MCS modes, a slice source the test feeds.
import type { Hono } from 'hono';
import { assembleService } from '../../../src/service/assemble.js';
import type { Observability } from '../../../src/service/observability.js';
import { listen, type RunningServer } from '../../../src/http/server.js';
import type { Join } from '../../../src/join/join.js';
import type { PoolDiscovery } from '../../../src/contract/index.js';
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
  const service = assembleService({
    store: createMemoryStore({ leaseMs: options.leaseMs }),
    slices: options.slices,
    logger: logs.logger,
    observabilityOptions: { debugFlushMs: 50 },
    join: {
      poolDiscovery: options.poolDiscovery ?? 'registrations',
      leaseMs: options.leaseMs,
      sweepIntervalMs: 50,
      retentionMs: options.retentionMs,
    },
    heartbeatIntervalMs: Math.floor(options.leaseMs / 3),
    keepAliveMs: options.keepAliveMs,
  });
  service.start();
  const server = await listen({ app: service.app, host: '127.0.0.1', port: 0 });
  return {
    app: service.app,
    join: service.join,
    observability: service.observability,
    logs,
    server,
    url: server.url,
    async stop() {
      service.endStreams();
      await server.close(500);
      await service.stop();
    },
  };
}
