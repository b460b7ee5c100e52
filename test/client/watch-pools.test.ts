// watchPools() against the real service in-process: it sees a pool register and lapse, keeps the pool
// map and per-model lookups, falls back to polling GET /pools where a proxy cuts or holds the event
// stream, reconnects after an event the contract refuses (logged), and stops on close().
import { afterEach, describe, expect, it } from 'vitest';
import { watchPools, type PoolChange, type PoolWatch, type WatchStatus } from '../../src/client/index.js';
import { postJson } from '../support/http.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startProxy } from './support.js';

const running: { stop(): Promise<void> }[] = [];
const watches: PoolWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

function follow(servers: string[], options: Partial<Parameters<typeof watchPools>[0]> = {}) {
  const changes: PoolChange[] = [];
  const statuses: WatchStatus[] = [];
  const logs = captureLogs();
  const watch = watchPools({ servers, logger: logs.logger, ...options });
  watches.push(watch);
  watch.onChange((change) => changes.push(change));
  watch.onStatus((status) => statuses.push(status));
  return { watch, changes, statuses, logs };
}

const LEASE_MS = 800;

describe('watchPools', () => {
  it('sees a pool register and lapse, with the map, per-model lookups and change events', async () => {
    const service = await startService({ leaseMs: LEASE_MS, heartbeatIntervalMs: 200 });
    running.push(service);
    const { watch, changes, statuses } = follow([service.url]);
    await watch.ready;
    expect(watch.status).toMatchObject({ server: service.url, transport: 'sse' });

    expect((await postJson(service.url, registration({ name: 'a', model: 'm1' }))).status).toBe(200);
    expect((await postJson(service.url, registration({ name: 'b', model: 'm2' }))).status).toBe(200);
    await waitFor(() => watch.pools.size === 2);
    expect(changes.slice(0, 2).map((c) => [c.type, c.key])).toEqual([
      ['added', 'us-east-1/llm/a'],
      ['added', 'us-east-1/llm/b'],
    ]);
    expect(watch.byModel('m1').map((p) => p.name)).toEqual(['a']);
    expect(watch.get({ cluster_id: 'us-east-1', namespace: 'llm', name: 'b' })?.model).toBe('m2');
    expect(watch.get('us-east-1/llm/a')?.state).toBe('live');

    // A changed registration is an update; no heartbeat after it, and both lapse.
    expect((await postJson(service.url, registration({ name: 'a', model: 'm1', frontends: [] }))).status).toBe(200);
    await waitFor(() => changes.some((c) => c.type === 'updated' && c.pool.state === 'frontendless'));
    await waitFor(() => watch.pools.size === 0, { timeoutMs: LEASE_MS + 2000 });
    expect(changes.filter((c) => c.type === 'removed').map((c) => c.key).sort()).toEqual(['us-east-1/llm/a', 'us-east-1/llm/b']);
    expect(watch.byModel('m1')).toEqual([]);
    // The memory store is complete after one lease.
    await waitFor(() => watch.status.complete);
    expect(statuses.every((s) => s.transport === 'sse')).toBe(true);
  });

  it.each([
    { mode: 'cut' as const, what: 'answers 502 to the event stream' },
    { mode: 'hold' as const, what: 'holds the event stream back (a buffering proxy)' },
  ])('polls GET /pools where a proxy $what, and still sees register and lapse', async ({ mode }) => {
    const service = await startService({ leaseMs: LEASE_MS, heartbeatIntervalMs: 200 });
    running.push(service);
    const proxy = await startProxy(service.url, mode);
    running.push(proxy);
    const { watch, changes, logs } = follow([proxy.url], { pollIntervalMs: 100, firstEventTimeoutMs: 300 });
    await watch.ready;
    await waitFor(() => watch.status.transport === 'polling');
    expect(logs.warnings().find((l) => l.msg === 'event stream unavailable; polling GET /pools')).toMatchObject({ server: proxy.url });

    expect((await postJson(service.url, registration({ name: 'polled' }))).status).toBe(200);
    await waitFor(() => watch.get('us-east-1/llm/polled') !== undefined);
    await waitFor(() => watch.get('us-east-1/llm/polled') === undefined, { timeoutMs: LEASE_MS + 2000 });
    expect(changes.map((c) => c.type)).toEqual(['added', 'removed']);
    // It kept polling, not reconnecting to the stream every time.
    expect(proxy.watchRequests).toBe(1);
  });

  it('tries the event stream again while polling, and goes back to it when it works', async () => {
    const service = await startService({ leaseMs: LEASE_MS, heartbeatIntervalMs: 200 });
    running.push(service);
    const proxy = await startProxy(service.url, 'cut');
    running.push(proxy);
    const { watch } = follow([proxy.url], { pollIntervalMs: 100, sseRetryIntervalMs: 500 });
    await waitFor(() => watch.status.transport === 'polling');
    proxy.mode = 'pass';
    await waitFor(() => watch.status.transport === 'sse', { timeoutMs: 3000 });
  });

  it('logs an event the contract refuses and reconnects, relisting from the next resync', async () => {
    const service = await startService({ leaseMs: 5000, heartbeatIntervalMs: 1000 });
    running.push(service);
    expect((await postJson(service.url, registration({ name: 'kept' }))).status).toBe(200);
    const proxy = await startProxy(service.url, 'garble-once');
    running.push(proxy);
    const { watch, logs } = follow([proxy.url], { backoff: { initialMs: 50 } });
    await watch.ready;
    expect(watch.get('us-east-1/llm/kept')).toBeDefined();
    expect(watch.status.transport).toBe('sse');
    expect(logs.warnings().find((l) => l.msg === 'watch event refused; reconnecting')).toMatchObject({
      event: 'resync',
      reason: expect.stringMatching(/^resync data breaks the contract at complete/),
    });
    expect(proxy.watchRequests).toBe(2);
  });

  it('stops on close(): no change after it, and the stream is closed', async () => {
    const service = await startService({ leaseMs: 5000, heartbeatIntervalMs: 1000 });
    running.push(service);
    const { watch, changes } = follow([service.url]);
    await watch.ready;
    await watch.close();
    expect(watch.status.transport).toBe('disconnected');
    expect((await postJson(service.url, registration({ name: 'after-close' }))).status).toBe(200);
    // Another watch sees it: the closed one does not.
    const other = follow([service.url]);
    await waitFor(() => other.watch.get('us-east-1/llm/after-close') !== undefined);
    expect(changes).toEqual([]);
  });

  it('refuses servers that are not http(s) URLs at once', () => {
    expect(() => watchPools({ servers: [] })).toThrow(TypeError);
    expect(() => watchPools({ servers: ['poolscope:8080'] })).toThrow(/must be an http/);
  });
});
