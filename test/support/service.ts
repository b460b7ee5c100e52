// An in-process poolscope (store, join, Hono app, a real socket on 127.0.0.1) for HTTP tests.
import type { Hono } from 'hono';
import { createApp } from '../../src/http/app.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import { Join } from '../../src/join/join.js';
import type { SliceSource } from '../../src/kube/types.js';
import { createMemoryStore } from '../../src/store/memory.js';
import type { RegistrationStore } from '../../src/store/types.js';
import type { PoolDiscovery } from '../../src/cli/config.js';
import { captureLogs, type CapturedLogs } from './logs.js';

export interface TestService {
  app: Hono;
  join: Join;
  store: RegistrationStore;
  logs: CapturedLogs;
  server: RunningServer;
  url: string;
  stop(): Promise<void>;
}

export interface TestServiceOptions {
  leaseMs?: number;
  heartbeatIntervalMs?: number;
  store?: RegistrationStore;
  poolDiscovery?: PoolDiscovery;
  slices?: SliceSource;
  authTokens?: string[];
  keepAliveMs?: number;
  sweepIntervalMs?: number;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const leaseMs = options.leaseMs ?? 15_000;
  const logs = captureLogs();
  const store = options.store ?? createMemoryStore({ leaseMs });
  const join = new Join({
    poolDiscovery: options.poolDiscovery ?? 'registrations',
    leaseMs,
    store,
    slices: options.slices,
    logger: logs.logger,
    sweepIntervalMs: options.sweepIntervalMs ?? 50,
  });
  const shutdown = new AbortController();
  const app = createApp({
    join,
    store,
    logger: logs.logger,
    leaseMs,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? Math.floor(leaseMs / 3),
    authTokens: options.authTokens,
    keepAliveMs: options.keepAliveMs,
    shutdown: shutdown.signal,
  });
  join.start();
  const server = await listen({ app, host: '127.0.0.1', port: 0 });
  return {
    app,
    join,
    store,
    logs,
    server,
    url: server.url,
    async stop() {
      shutdown.abort();
      await server.close(500);
      await join.stop();
      await store.close();
    },
  };
}

/** A valid registration body, with overrides. */
export function registration(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cluster_id: 'us-east-1',
    namespace: 'llm',
    name: 'llama-70b',
    model: 'meta-llama/Llama-3.1-70B-Instruct',
    capabilities: ['chat', 'kv-routing'],
    capacity: [{ name: 'gpus', value: 8 }],
    location: { region: 'us-east-1', zone: 'us-east-1a' },
    frontends: ['http://10.0.0.7:8000'],
    relay: 'http://10.0.0.9:9000',
    ...overrides,
  };
}

export function postJson(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/pools`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
