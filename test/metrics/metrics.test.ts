// GET /metrics of the service as `serve` assembles it, through app.request(): the exposition parses
// strictly, names every metric docs/contract.md §5 lists, and its counters and gauges move with the events
// the test causes.
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentStore } from '../../src/metrics/instrumented-store.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError } from '../../src/store/types.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { parsePrometheusText, valueOf, type Family } from './prometheus-text.js';

const LEASE_MS = 600;

function meteredService(): Promise<TestService> {
  return startService({ leaseMs: LEASE_MS, heartbeatIntervalMs: 200, observability: { processMetrics: true }, socket: false });
}

async function scrape(app: Hono): Promise<Map<string, Family>> {
  const response = await app.request('/metrics');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

describe('GET /metrics', () => {
  let svc: TestService;
  let app: Hono;
  beforeAll(async () => {
    svc = await meteredService();
    app = svc.app;
  });
  afterAll(() => svc?.stop());

  it('exposes every metric the contract names, typed, plus the process metrics', async () => {
    const families = await scrape(app);
    const types = Object.fromEntries([...families.values()].map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      poolscope_pools: 'gauge',
      poolscope_heartbeats_total: 'counter',
      poolscope_lapses_total: 'counter',
      poolscope_warnings_total: 'counter',
      poolscope_store_command_seconds: 'histogram',
      poolscope_watch_subscribers: 'gauge',
      poolscope_source_synced: 'gauge',
      process_cpu_user_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
    });
    for (const state of ['unregistered', 'one-sided', 'live', 'frontendless', 'lapsed', 'absent']) {
      expect(valueOf(families, 'poolscope_pools', { state })).toBe(0);
    }
    for (const outcome of ['ok', 'invalid', 'unauthorized', 'unavailable']) {
      expect(valueOf(families, 'poolscope_heartbeats_total', { outcome })).toBe(0);
    }
    expect(valueOf(families, 'poolscope_warnings_total', { kind: 'frontendless' })).toBe(0);
    expect(valueOf(families, 'poolscope_source_synced', { source: 'store' })).toBe(1);
  });

  it('moves with heartbeats, pools, lapses, warnings, store commands and watchers', async () => {
    const before = await scrape(app);
    const count = (f: Map<string, Family>, name: string, labels: Record<string, string> = {}) => valueOf(f, name, labels) ?? 0;

    const live = registration({ name: 'metered' });
    const bare = registration({ name: 'bare', frontends: [] });
    expect((await postJson(app, live)).status).toBe(200);
    expect((await postJson(app, live)).status).toBe(200);
    expect((await postJson(app, bare)).status).toBe(200);
    expect((await postJson(app, { ...live, model: '' })).status).toBe(400);
    expect((await postJson(app, '{not json')).status).toBe(400);

    const listed = await waitFor(
      async () => {
        const f = await scrape(app);
        return count(f, 'poolscope_pools', { state: 'live' }) === 1 && count(f, 'poolscope_pools', { state: 'frontendless' }) === 1 && f;
      },
      { message: 'one live and one frontendless pool' },
    );
    expect(count(listed, 'poolscope_heartbeats_total', { outcome: 'ok' }) - count(before, 'poolscope_heartbeats_total', { outcome: 'ok' })).toBe(3);
    expect(count(listed, 'poolscope_heartbeats_total', { outcome: 'invalid' }) - count(before, 'poolscope_heartbeats_total', { outcome: 'invalid' })).toBe(2);
    expect(count(listed, 'poolscope_warnings_total', { kind: 'frontendless' }) - count(before, 'poolscope_warnings_total', { kind: 'frontendless' })).toBe(1);
    const heartbeatCommands = count(listed, 'poolscope_store_command_seconds_count', { command: 'heartbeat', outcome: 'ok' });
    expect(heartbeatCommands - count(before, 'poolscope_store_command_seconds_count', { command: 'heartbeat', outcome: 'ok' })).toBe(3);
    expect(count(listed, 'poolscope_store_command_seconds_sum', { command: 'heartbeat', outcome: 'ok' })).toBeGreaterThan(0);
    expect(count(listed, 'poolscope_store_command_seconds_count', { command: 'snapshot', outcome: 'ok' })).toBeGreaterThanOrEqual(1);

    // Watchers: one stream open, then none.
    const sse = await SseReader.open(app, '/pools/watch');
    await waitFor(async () => count(await scrape(app), 'poolscope_watch_subscribers', { stream: 'pools' }) === 1, { message: 'one watcher' });
    await sse.close();
    await waitFor(async () => count(await scrape(app), 'poolscope_watch_subscribers', { stream: 'pools' }) === 0, { message: 'no watcher' });

    // No more heartbeats: both leases lapse, each counted once.
    const lapsed = await waitFor(
      async () => {
        const f = await scrape(app);
        return count(f, 'poolscope_pools', { state: 'lapsed' }) === 2 && f;
      },
      { timeoutMs: LEASE_MS + 3000, message: 'two lapsed pools' },
    );
    expect(count(lapsed, 'poolscope_lapses_total') - count(before, 'poolscope_lapses_total')).toBe(2);
    expect(count(lapsed, 'poolscope_pools', { state: 'live' })).toBe(0);
  });

  it('keeps a registry per service: two services in one process count apart', async () => {
    const other = await meteredService();
    try {
      expect((await postJson(other.app, registration({ name: 'elsewhere' }))).status).toBe(200);
      const mine = await scrape(app);
      const theirs = await scrape(other.app);
      expect(valueOf(theirs, 'poolscope_heartbeats_total', { outcome: 'ok' })).toBe(1);
      expect(valueOf(mine, 'poolscope_heartbeats_total', { outcome: 'ok' })).not.toBe(1);
    } finally {
      await other.stop();
    }
  });

  it('reports whether each source is synced (the memory store warms up for one lease)', async () => {
    const fresh = await meteredService();
    try {
      const first = await scrape(fresh.app);
      expect(valueOf(first, 'poolscope_source_synced', { source: 'warmup' })).toBe(0);
      await waitFor(async () => valueOf(await scrape(fresh.app), 'poolscope_source_synced', { source: 'warmup' }) === 1, {
        timeoutMs: LEASE_MS + 2000,
        message: 'warm-up over',
      });
    } finally {
      await fresh.stop();
    }
  });
});

describe('instrumentStore', () => {
  it('times failed commands as errors and passes the error on', async () => {
    const observed: [string, string][] = [];
    const raw = createMemoryStore({ leaseMs: 1000 });
    const store = instrumentStore({ store: raw, observe: (command, outcome) => observed.push([command, outcome]) });
    await store.heartbeat(registration());
    await raw.close();
    await expect(store.heartbeat(registration())).rejects.toThrow();
    expect(observed).toEqual([
      ['heartbeat', 'ok'],
      ['heartbeat', 'error'],
    ]);
    expect(store.kind).toBe('memory');
    expect(store.forgetsOnRestart).toBe(true);
  });

  it("passes a watch's epoch and its reached callback on to the store", async () => {
    const raw = createMemoryStore({ leaseMs: 60_000 });
    const store = instrumentStore({ store: raw, observe: () => undefined });
    const { position, epoch } = await store.snapshot();
    // Another epoch than the store's: its log does not reach back (a store that lost its data).
    await expect(store.watch(position, new AbortController().signal, `not ${epoch}`)[Symbol.asyncIterator]().next()).rejects.toThrow(PositionLostError);
    // Its own: reached once the log is found to reach back, before the first event.
    const order: string[] = [];
    await store.heartbeat(registration({ name: 'after' }));
    const stop = new AbortController();
    for await (const event of store.watch(position, stop.signal, epoch, async () => void order.push('reached'))) {
      order.push(event.type === 'upsert' ? event.record.registration.name : event.type);
      stop.abort();
    }
    expect(order).toEqual(['reached', 'after']);
    await raw.close();
  });
});
