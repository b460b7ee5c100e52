// The router client against the real service over sockets (docs/contract.md §5): back on the same
// replica it resumes its watch stream with Last-Event-ID (the changes it missed, no resync), never after
// switching replica; polling, it asks for gzip or br and sends its last ETag, and keeps its pools on a 304.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { watchPools, type PoolWatch } from '../../src/client/index.js';
import { postJson } from '../support/http.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  status?: number;
  responseHeaders?: IncomingMessage['headers'];
  /** What the replica sent back (the raw bytes, as text: SSE is not compressed). */
  body: string;
}

/** An HTTP proxy that records each request and its reply, can hold new watch requests, cut open streams, or refuse watches. */
async function recordingProxy(target: string) {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const streams = new Set<ServerResponse>();
  let release: (() => void) | undefined;
  let gate: Promise<void> = Promise.resolve();
  const control = {
    url: '',
    seen,
    watches: () => seen.filter((s) => s.path.startsWith('/pools/watch')),
    polls: () => seen.filter((s) => s.path === '/pools'),
    refuseWatches: false,
    /** Watch streams get their headers and nothing more, as behind a buffering proxy. */
    bufferWatches: false,
    /** New watch requests wait until release(). */
    hold() {
      gate = new Promise((resolve) => (release = resolve));
    },
    release: () => release?.(),
    /** Cut every open watch stream. */
    cut() {
      for (const res of streams) res.destroy();
    },
    stop: async () => {},
  };
  const server = createServer(async (req, res) => {
    const record: Seen = { path: req.url ?? '', headers: req.headers, body: '' };
    seen.push(record);
    const watch = record.path.startsWith('/pools/watch');
    if (watch && control.refuseWatches) return req.socket.destroy();
    if (watch && control.bufferWatches) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.flushHeaders();
    }
    if (watch) {
      streams.add(res);
      res.on('close', () => streams.delete(res));
      await gate;
    }
    const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers, agent: false }, (reply) => {
      record.status = reply.statusCode;
      record.responseHeaders = reply.headers;
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.on('data', (chunk: Buffer) => {
        if (watch) record.body += chunk.toString('latin1');
        res.write(chunk);
      });
      reply.on('end', () => res.end());
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  control.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  control.stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return control;
}

const running: { stop(): Promise<void> }[] = [];
const watches: PoolWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

async function replica() {
  // A long lease: no pool lapses and the memory store's warm-up (a completeness change) stays out of the test.
  const service = await startService({ leaseMs: 60_000 });
  running.push(service);
  const proxy = await recordingProxy(service.url);
  running.push(proxy);
  return { service, proxy };
}

function follow(servers: string[], options: Partial<Parameters<typeof watchPools>[0]> = {}) {
  const watch = watchPools({ servers, logger: captureLogs().logger, random: () => 0, backoff: { initialMs: 50, maxMs: 200 }, ...options });
  watches.push(watch);
  return watch;
}

describe('watchPools resumes', () => {
  it('reconnects to the same replica with Last-Event-ID and gets only the changes it missed', async () => {
    const { service, proxy } = await replica();
    const watch = follow([proxy.url]);
    expect((await postJson(service.url, registration({ name: 'a' }))).status).toBe(200);
    await waitFor(() => watch.get('us-east-1/llm/a') !== undefined, { message: 'pool a' });
    const last = watch.status.revision!;

    proxy.hold();
    proxy.cut();
    await waitFor(() => watch.status.transport === 'disconnected', { message: 'stream cut' });
    // A change while the client is away.
    expect((await postJson(service.url, registration({ name: 'b' }))).status).toBe(200);
    await waitFor(() => service.join.view.size === 2, { message: 'b listed' });
    await waitFor(() => proxy.watches().length === 2, { message: 'the reconnect' });
    proxy.release();
    await waitFor(() => watch.get('us-east-1/llm/b') !== undefined, { message: 'pool b after the reconnect' });

    const [first, second] = proxy.watches();
    expect(first!.headers['last-event-id']).toBeUndefined();
    expect(second!.headers['last-event-id']).toBe(last);
    expect(second!.body).toMatch(/^retry: 1000\n\n: resumed\n\nevent: upsert\n/);
    expect(second!.body).not.toContain('event: resync');
    expect(watch.get('us-east-1/llm/a')).toBeDefined();
    expect(watch.status).toMatchObject({ transport: 'sse', revision: service.join.view.revision, complete: false });
  });

  it('sends no Last-Event-ID to another replica', async () => {
    const one = await replica();
    const two = await replica();
    const watch = follow([one.proxy.url, two.proxy.url]);
    expect((await postJson(one.service.url, registration({ name: 'a' }))).status).toBe(200);
    await waitFor(() => watch.get('us-east-1/llm/a') !== undefined, { message: 'pool a' });
    one.proxy.refuseWatches = true;
    one.proxy.cut();
    await waitFor(() => two.proxy.watches()[0]?.body.startsWith('retry: 1000\n\nevent: resync') === true, { message: 'the stream of replica two' });
    // It did try its own replica again first, with the id; the other replica was asked without one.
    expect(one.proxy.watches().slice(1).every((s) => s.headers['last-event-id'] !== undefined)).toBe(true);
    expect(two.proxy.watches()[0]!.headers['last-event-id']).toBeUndefined();
    // The proxy records the resync's bytes before it forwards them: the watch takes them a moment later.
    await waitFor(() => watch.status.server === two.proxy.url, { message: 'the watch on replica two' });
  });
});

describe('watchPools and the ends a replica chooses (docs/contract.md §11)', () => {
  it('an overloaded replica (--max-watchers) is left for the next at once; a closing one is reconnected from', async () => {
    const full = await startService({ leaseMs: 60_000, maxWatchers: 1 });
    running.push(full);
    const other = await startService({ leaseMs: 60_000 });
    running.push(other);
    // The full replica's one stream is taken.
    const taken = new AbortController();
    running.push({ stop: async () => taken.abort() });
    const first = await fetch(`${full.url}/pools/watch`, { headers: { accept: 'text/event-stream' }, signal: taken.signal });
    expect(first.status).toBe(200);
    const logs = captureLogs();
    const watch = watchPools({ servers: [full.url, other.url], logger: logs.logger, random: () => 0, backoff: { initialMs: 50, maxMs: 200 } });
    watches.push(watch);
    await watch.ready;
    expect(watch.status).toMatchObject({ server: other.url, transport: 'sse' });
    expect(logs.lines.some((line) => line.msg === 'poolscope replica failed; trying the next' && /overloaded|too_many_watchers/.test(String(line.reason)))).toBe(true);
    // The other replica drains: its stream says closing, and the watch moves on (back to the first, free now).
    taken.abort();
    void other.stop();
    await waitFor(() => watch.status.server === full.url && watch.status.transport === 'sse', { message: 'back on the first replica' });
    expect(logs.lines.some((line) => line.msg === 'watch stream ended' && /closing/.test(String(line.reason)))).toBe(true);
  });
});

describe('watchPools polling', () => {
  it('asks for gzip and br, sends its last ETag, and keeps its pools on a 304', async () => {
    const { service, proxy } = await replica();
    expect((await postJson(service.url, registration({ name: 'a' }))).status).toBe(200);
    await waitFor(() => service.join.view.size === 1);
    // Behind a buffering proxy the stream's first event never comes: the client polls.
    proxy.bufferWatches = true;
    const watch = follow([proxy.url], { pollIntervalMs: 50, firstEventTimeoutMs: 200 });
    await waitFor(() => proxy.polls().filter((p) => p.status === 304).length >= 2, { timeoutMs: 10_000, message: 'two 304s' });
    const polls = proxy.polls();
    expect(polls[0]!.headers['accept-encoding']).toBe('gzip, br');
    expect(polls[0]!.headers['if-none-match']).toBeUndefined();
    expect(polls[0]!.responseHeaders!['content-encoding']).toBe('br');
    const etag = polls[0]!.responseHeaders!.etag;
    expect(polls[1]!.headers['if-none-match']).toBe(etag);
    expect(polls[1]!.status).toBe(304);
    expect([...watch.pools.keys()]).toEqual(['us-east-1/llm/a']);
    expect(watch.status).toMatchObject({ transport: 'polling', complete: false });

    expect((await postJson(service.url, registration({ name: 'b' }))).status).toBe(200);
    await waitFor(() => watch.get('us-east-1/llm/b') !== undefined, { message: 'b polled' });
    expect([...watch.pools.keys()].sort()).toEqual(['us-east-1/llm/a', 'us-east-1/llm/b']);
    const changed = proxy.polls().find((p) => p.status === 200 && p !== polls[0])!;
    expect(changed.headers['if-none-match']).toBe(etag);
    expect(changed.responseHeaders!.etag).not.toBe(etag);
  });
});
