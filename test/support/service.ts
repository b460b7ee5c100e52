// An in-process poolscope (store, join, Hono app, a real socket on 127.0.0.1) for HTTP tests.
import type { Hono } from 'hono';
import { assembleService } from '../../src/service/assemble.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import type { Join } from '../../src/join/join.js';
import type { SliceSource } from '../../src/kube/types.js';
import { createMemoryStore } from '../../src/store/memory.js';
import type { RegistrationStore } from '../../src/store/types.js';
import type { PoolDiscovery } from '../../src/contract/index.js';
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
  const service = assembleService({
    store: options.store ?? createMemoryStore({ leaseMs }),
    slices: options.slices,
    logger: logs.logger,
    observabilityOptions: { processMetrics: false },
    join: {
      poolDiscovery: options.poolDiscovery ?? 'registrations',
      leaseMs,
      sweepIntervalMs: options.sweepIntervalMs ?? 50,
    },
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? Math.floor(leaseMs / 3),
    authTokens: options.authTokens,
    keepAliveMs: options.keepAliveMs,
  });
  service.start();
  const server = await listen({ app: service.app, host: '127.0.0.1', port: 0 });
  return {
    app: service.app,
    join: service.join,
    store: service.store,
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
