// POST /pools served before Hono (heartbeat.ts, heartbeatFastPath): over a socket, a heartbeat gets the
// very reply the Hono route gives (status, type, body) for every kind of body; the requests it does not
// take (anything but a plain POST /pools with a JSON body of a stated length) go on to Hono untouched.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeFastPathOf } from '../../src/http/app.js';
import { heartbeatFastPath, type HeartbeatDeps } from '../../src/http/heartbeat.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { rawConnect } from './raw-client.js';

const BODIES: Array<[string, string]> = [
  ['a valid registration', JSON.stringify(registration({ name: 'fast-a' }))],
  ['the same, its keys in another order', JSON.stringify(Object.fromEntries(Object.entries(registration({ name: 'fast-a' })).reverse()))],
  ['defaults left out', JSON.stringify(registration({ name: 'fast-b', capabilities: undefined, location: undefined, relay: undefined }))],
  ['a byte-order mark first', `\uFEFF${JSON.stringify(registration({ name: 'fast-c' }))}`],
  ['malformed JSON', '{"cluster_id": '],
  ['an empty body', ''],
  ['a field broken', JSON.stringify(registration({ name: 'UPPER' }))],
  ['an unknown field', JSON.stringify(registration({ colour: 'blue' }))],
  ['a nested unknown field', JSON.stringify(registration({ capacity: [{ name: 'gpus', value: 8, unit: 'x' }] }))],
  ['a body that is a list', '[1]'],
  ['a frontend that is no URL', JSON.stringify(registration({ frontends: ['10.0.0.7:8000'] }))],
];

describe('POST /pools before Hono, over a socket', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 15_000, heartbeatIntervalMs: 5000 });
  });
  afterAll(() => svc.stop());

  it('is set up for an app without write tokens', () => {
    expect(nodeFastPathOf(svc.app)).toBeTypeOf('function');
  });

  it.each(BODIES)('answers %s exactly as the Hono route does', async (_what, body) => {
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    const viaSocket = await fetch(`${svc.url}/pools`, init);
    const viaHono = await svc.app.request('/pools', init);
    expect(viaSocket.status).toBe(viaHono.status);
    expect(viaSocket.headers.get('content-type')).toBe('application/json');
    expect(viaHono.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await viaSocket.json()).toEqual(await viaHono.json());
  });

  it('is what the service\'s socket serves a plain heartbeat with; a chunked one goes through Hono', async () => {
    // Seen on the wire: the fast path writes its header names as it gives them (lowercase), Hono's listener
    // in the case it builds them. Without the fast path the replica answers the same, at more CPU a beat.
    const body = JSON.stringify(registration({ name: 'on-the-wire' }));
    const plain = await rawConnect(svc.port, `POST /pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    const chunked = await rawConnect(svc.port, `POST /pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    await Promise.all([plain.whenClosed, chunked.whenClosed]);
    expect(plain.status()).toBe(200);
    expect(plain.received).toMatch(/\r\ncontent-type: application\/json\r\ncontent-length: \d+\r\n/);
    expect(chunked.status()).toBe(200);
    expect(chunked.received).toMatch(/\r\nContent-Type: application\/json\r\n/);
    expect(chunked.received.slice(chunked.received.indexOf('\r\n\r\n'))).toBe(plain.received.slice(plain.received.indexOf('\r\n\r\n')));
  });

  it('stores what it accepts, and counts each outcome as the route does', async () => {
    const before = await heartbeats(svc);
    await fetch(`${svc.url}/pools`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(registration({ name: 'counted' })) });
    await fetch(`${svc.url}/pools`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect((await svc.store.snapshot()).records.map((r) => r.key)).toContain('us-east-1/llm/counted');
    const after = await heartbeats(svc);
    expect(after.ok - before.ok).toBe(1);
    expect(after.invalid - before.invalid).toBe(1);
  });
});

async function heartbeats(svc: TestService): Promise<{ ok: number; invalid: number }> {
  const text = await (await fetch(`${svc.url}/metrics`)).text();
  const sample = (outcome: string) => Number(new RegExp(`poolscope_heartbeats_total\\{outcome="${outcome}"\\} (\\S+)`).exec(text)?.[1] ?? NaN);
  return { ok: sample('ok'), invalid: sample('invalid') };
}

describe('heartbeatFastPath: what it takes and what it leaves', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /**
   * A server with the fast path first and, behind it, a 599 that tells a request it left. `lenient`: Node's
   * lenient parser (`insecureHTTPParser`), which passes a Transfer-Encoding and a Content-Length together.
   */
  async function serve(deps: Partial<HeartbeatDeps> = {}, { lenient = false } = {}) {
    const logs = captureLogs('debug');
    const outcomes: string[] = [];
    const store = deps.store ?? createMemoryStore({ leaseMs: 15_000 });
    const fast = heartbeatFastPath({ store, leaseMs: 15_000, heartbeatIntervalMs: 5000, onOutcome: (o) => outcomes.push(o), logger: logs.logger });
    // Without Node's own Host check, as the service's server (connection-limits.ts): the fast path must
    // leave a request without one to the checks behind it.
    server = createServer({ requireHostHeader: false, insecureHTTPParser: lenient }, (req, res) => {
      if (fast(req, res)) return;
      req.resume();
      res.writeHead(599).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return { port, url: `http://127.0.0.1:${port}`, store, outcomes, logs };
  }

  it('takes a plain heartbeat: the reply, the lease stored', async () => {
    const { url, store, outcomes } = await serve();
    const response = await fetch(`${url}/pools`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(registration()) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String((await response.clone().text()).length));
    expect(await response.json()).toEqual({ pool: 'us-east-1/llm/llama-70b', lease_ms: 15_000, heartbeat_interval_ms: 5000 });
    expect((await store.snapshot()).records.map((r) => r.key)).toEqual(['us-east-1/llm/llama-70b']);
    expect(outcomes).toEqual(['ok']);
  });

  it.each([
    ['another path', '/pools?x=1', 'POST', { 'content-type': 'application/json' }],
    ['another method', '/pools', 'PUT', { 'content-type': 'application/json' }],
    ['a type that is not JSON', '/pools', 'POST', { 'content-type': 'text/plain' }],
    ['no type', '/pools', 'POST', {}],
  ] as Array<[string, string, string, Record<string, string>]>)('leaves %s to Hono', async (_what, path, method, headers) => {
    const { url, outcomes } = await serve();
    const response = await fetch(`${url}${path}`, { method, headers, body: JSON.stringify(registration()) });
    expect(response.status).toBe(599);
    expect(outcomes).toEqual([]);
  });

  it.each([
    ['a body over the limit', `Content-Type: application/json\r\nContent-Length: ${64 * 1024 + 1}\r\n`],
    ['a chunked body', 'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n'],
    ['no length', 'Content-Type: application/json\r\n'],
    // Any coding, identity too: the route decides what to refuse.
    ['a Content-Encoding', 'Content-Type: application/json\r\nContent-Encoding: identity\r\nContent-Length: 5\r\n'],
  ])('leaves %s to Hono', async (_what, headers) => {
    const { port } = await serve();
    const raw = await rawConnect(port, `POST /pools HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n0\r\n\r\n`);
    await raw.whenClosed;
    expect(raw.status()).toBe(599);
  });

  it('leaves a chunked body with a Content-Length too to Hono (the size of a chunked body is its chunks\', not the header\'s)', async () => {
    const { port, outcomes } = await serve({}, { lenient: true });
    const body = JSON.stringify(registration());
    const raw = await rawConnect(
      port,
      `POST /pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    await raw.whenClosed;
    expect(raw.status()).toBe(599);
    expect(outcomes).toEqual([]);
  });

  it.each([['a b'], ['x:65536'], ['x:123456'], ['a/b'], ['']])('leaves a Host header the URL parser may refuse (%s) to Hono', async (host) => {
    const { port } = await serve();
    const body = JSON.stringify(registration());
    const raw = await rawConnect(port, `POST /pools HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    await raw.whenClosed;
    expect(raw.status()).toBe(599);
  });

  it('leaves a request without a Host header to Hono', async () => {
    const { port } = await serve();
    const body = JSON.stringify(registration());
    const raw = await rawConnect(port, `POST /pools HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    await raw.whenClosed;
    expect(raw.status()).toBe(599);
  });

  it('takes a body of exactly the limit', async () => {
    const { port, outcomes } = await serve();
    const json = JSON.stringify(registration());
    const body = json + ' '.repeat(64 * 1024 - json.length);
    const raw = await rawConnect(port, `POST /pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    await raw.whenClosed;
    expect(raw.status()).toBe(200);
    expect(outcomes).toEqual(['ok']);
  });

  it('takes a body that arrives in several pieces, whole', async () => {
    const { port, store, outcomes } = await serve();
    const body = JSON.stringify(registration({ name: 'in-pieces' }));
    const raw = await rawConnect(port, `POST /pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 40)}`);
    // The first piece read on its own before the rest is sent.
    await expect.poll(() => raw.socket.bytesWritten).toBeGreaterThan(40);
    await new Promise((resolve) => setTimeout(resolve, 50));
    raw.socket.write(body.slice(40));
    await raw.whenClosed;
    expect(raw.status()).toBe(200);
    expect(outcomes).toEqual(['ok']);
    expect((await store.snapshot()).records.map((r) => r.key)).toEqual(['us-east-1/llm/in-pieces']);
  });

  it('takes a plain Host: a name with a port, an IPv6 address', async () => {
    const { port } = await serve();
    for (const host of ['poolscope.svc:8080', '[::1]:80', '10.0.0.1', 'x:65535']) {
      const body = JSON.stringify(registration());
      const raw = await rawConnect(port, `POST /pools HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      await raw.whenClosed;
      expect(raw.status()).toBe(200);
    }
  });

  it('a store that cannot be reached: 503 store_unavailable, counted as unavailable', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 15_000 }));
    store.heartbeat = async () => {
      throw new StoreUnavailableError('redis store: heartbeat failed: Command timed out');
    };
    const { url, outcomes } = await serve({ store });
    const response = await fetch(`${url}/pools`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(registration()) });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: { code: 'store_unavailable', message: 'the registration store cannot be reached: redis store: heartbeat failed: Command timed out' },
    });
    expect(outcomes).toEqual(['unavailable']);
  });

  it('any other failure: 500 internal, logged as a failed request', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 15_000 }));
    store.heartbeat = async () => {
      throw new Error('a defect');
    };
    const { url, logs } = await serve({ store });
    const response = await fetch(`${url}/pools`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(registration()) });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: { code: 'internal', message: 'internal error' } });
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 50, msg: 'request failed', method: 'POST', path: '/pools' }));
  });

  it('a body cut short: counted as aborted once, one quiet line, nothing stored', async () => {
    const { port, store, outcomes, logs } = await serve();
    const raw = await rawConnect(port, 'POST /pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"cluster_id":');
    raw.socket.destroy();
    await expect.poll(() => outcomes).toEqual(['aborted']);
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 20, msg: 'request body aborted by the client', method: 'POST', path: '/pools', reason: 'aborted' }));
    expect((await store.snapshot()).records).toEqual([]);
  });
});
