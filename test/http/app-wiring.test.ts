// How the app (src/http/app.ts, createApp) wires its routes, one service per test so that what each test
// pins is traced to it: the renderer of an unexpected error (500 internal, logged with the request), the
// 404 of an unknown route, which refused write counts as a refused heartbeat, the keep-alive period handed
// to both lists' streams, and the /debug stream's own limit and metric label (docs/contract.md §5, §8).
import { afterEach, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../src/contract/index.js';
import { createApp } from '../../src/http/app.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type ServiceOptions, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { metricSample } from './raw-client.js';

const WRITE = 'write-token-0123456789';
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

async function service(options: ServiceOptions = {}): Promise<TestService> {
  svc = await startService({ leaseMs: 15_000, ...options });
  return svc;
}

const post = (path: string, body: unknown, token?: string) =>
  fetch(`${svc!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });

/** Reads `path` as an event stream until `done` holds of the text so far, or `ms` pass; returns the text. */
async function streamText(path: string, done: (text: string) => boolean, ms: number): Promise<string> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  let text = '';
  try {
    const response = await fetch(`${svc!.url}${path}`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return text;
}

describe('the app', () => {
  it('answers an unexpected error with 500 internal, and logs it with the request', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 15_000 }));
    store.heartbeat = async () => {
      throw new TypeError('a bug in the store');
    };
    const { app, logs } = await service({ store, socket: false });
    // Through Hono itself (the socket's fast path for heartbeats renders its own errors, heartbeat.ts).
    const response = await app.request('/pools', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(registration()) });
    expect(response.status).toBe(500);
    expect(errorBodySchema.parse(await response.json()).error).toEqual({ code: 'internal', message: 'internal error' });
    const line = logs.lines.find((l) => l.msg === 'request failed');
    expect(line).toMatchObject({ level: 50, method: 'POST', path: '/pools', err: { message: 'a bug in the store' } });
  });

  it('answers a route it does not have with 404 naming the method and path', async () => {
    await service();
    const response = await fetch(`${svc!.url}/nowhere?x=1`, { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect(errorBodySchema.parse(await response.json()).error).toEqual({ code: 'not_found', message: 'no route DELETE /nowhere' });
  });

  it('counts a refused write to /pools as an unauthorized heartbeat, and one to /routers not', async () => {
    await service({ authTokens: [WRITE] });
    const unauthorized = () => metricSample(svc!.url, 'poolscope_heartbeats_total', { outcome: 'unauthorized' });
    const before = (await unauthorized()) ?? 0;
    expect((await post('/routers', { id: 'r', url: 'http://10.0.0.9:8080', region: 'us-east-1' })).status).toBe(401);
    expect((await unauthorized()) ?? 0).toBe(before);
    expect((await post('/pools', registration())).status).toBe(401);
    expect(await unauthorized()).toBe(before + 1);
    expect((await post('/pools', registration(), WRITE)).status).toBe(200);
  });

  it.each(['/pools/watch', '/routers/watch'])('hands its keep-alive period to %s', async (path) => {
    await service({ keepAliveMs: 100 });
    // Two comments within two seconds: at the default 15 s there would be none.
    const text = await streamText(path, (t) => (t.match(/^:/gm) ?? []).length >= 2, 2_000);
    expect((text.match(/^:/gm) ?? []).length).toBeGreaterThanOrEqual(2);
  });

  it('holds the /debug stream to --max-watchers, counted under stream="debug"', async () => {
    await service({ maxWatchers: 1 });
    const first = new AbortController();
    const open = await fetch(`${svc!.url}/debug/pools/watch`, { headers: { accept: 'text/event-stream' }, signal: first.signal });
    expect(open.status).toBe(200);
    await waitFor(async () => (await metricSample(svc!.url, 'poolscope_watch_subscribers', { stream: 'debug' })) === 1, { message: 'one debug stream' });
    // Asked as JSON, the refusal is a 503 (as an event stream it is a last `overloaded` event).
    const refused = await fetch(`${svc!.url}/debug/pools/watch`, { headers: { accept: 'application/json' } });
    expect(refused.status).toBe(503);
    expect(errorBodySchema.parse(await refused.json()).error.code).toBe('too_many_watchers');
    expect(await metricSample(svc!.url, 'poolscope_watch_refused_total', { stream: 'debug' })).toBe(1);
    // The lists' streams are held apart: a pools stream is still taken.
    const pools = new AbortController();
    expect((await fetch(`${svc!.url}/pools/watch`, { headers: { accept: 'text/event-stream' }, signal: pools.signal })).status).toBe(200);
    first.abort();
    pools.abort();
  });

  it('built with only what it needs (no tokens, routers, page or metrics), it mounts the pools, probes and document, and no more', async () => {
    const { join, store } = await service({ socket: false });
    const app = createApp({ join, store, logger: silentLogger(), leaseMs: 15_000, heartbeatIntervalMs: 5000 });
    const body = JSON.stringify(registration());
    expect((await app.request('/pools', { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(200);
    for (const path of ['/pools', '/healthz', '/debug/pools', '/openapi.json']) expect((await app.request(path)).status, path).toBe(200);
    for (const path of ['/routers', '/metrics', '/debug']) expect((await app.request(path)).status, path).toBe(404);
  });
});
