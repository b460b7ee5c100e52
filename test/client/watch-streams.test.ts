// watchPools() and the ends of an event stream (src/client/sse-session.ts), against a real service behind a
// proxy that scripts GET /pools/watch (support.ts `onWatch`) and passes everything else. A 5xx other than
// 502/504 is the replica failing (the next one, no polling); a 502/504, another content type, and a stream
// that ends before its first event mean the path cuts streams (polling GET /pools); an event kind the client
// does not know is skipped, one whose data is not JSON refused; a silent stream is dead after
// idleTimeoutMs; a stream that worked for a second and ended is reconnected without counting a failure.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { watchPools, type PoolWatch, type WatchStatus } from '../../src/client/index.js';
import { postJson } from '../support/http.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { throughout, waitFor } from '../support/wait.js';
import { startProxy, type TestProxy } from './support.js';

const running: { stop(): Promise<void> }[] = [];
const watches: PoolWatch[] = [];
const streams = new Set<ServerResponse>();
afterEach(async () => {
  for (const res of streams) res.destroy();
  streams.clear();
  await Promise.all(watches.splice(0).map((w) => w.close()));
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

async function replica(): Promise<{ service: TestService; proxy: TestProxy }> {
  const service = await startService({ leaseMs: 60_000 });
  running.push(service);
  expect((await postJson(service.url, registration({ name: 'kept' }))).status).toBe(200);
  const proxy = await startProxy(service.url, 'pass');
  running.push(proxy);
  return { service, proxy };
}

function follow(servers: string[], options: Partial<Parameters<typeof watchPools>[0]> = {}) {
  const logs = captureLogs();
  const statuses: WatchStatus[] = [];
  const watch = watchPools({ servers, logger: logs.logger, random: () => 0, backoff: { initialMs: 50, maxMs: 100 }, pollIntervalMs: 50, ...options });
  watches.push(watch);
  watch.onStatus((status) => statuses.push(status));
  const lines = (msg: string) => logs.lines.filter((line) => line.msg === msg);
  return { watch, logs, statuses, lines };
}

/** The replica's list now, as the `resync` frame its stream would start with. */
async function resyncFrame(service: TestService): Promise<string> {
  const body = await (await fetch(`${service.url}/pools`)).text();
  const revision = (JSON.parse(body) as { revision: string }).revision;
  return `event: resync\nid: ${revision}\ndata: ${body}\n\n`;
}

/**
 * Writes `before`, then the replica's `resync` frame, to a scripted stream, then calls `then`. The list is
 * fetched after the client's request arrived, so a reconnect at a test's very end may find its replica
 * already stopped: that stream is destroyed, not left as an unhandled rejection in a later test.
 */
function sendResync(service: TestService, stream: ServerResponse, before = '', then?: () => void): void {
  resyncFrame(service).then(
    (frame) => {
      stream.write(`${before}${frame}`);
      then?.();
    },
    () => stream.destroy(),
  );
}

/** A stream the test writes: its headers now, and the response kept open until the test ends. */
function openStream(res: ServerResponse): ServerResponse {
  streams.add(res);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  return res;
}

const FAILED = 'poolscope replica failed; trying the next';
const POLLING = 'event stream unavailable; polling GET /pools';

describe('watchPools and the ends of a stream', () => {
  it('a 503 on the stream is the replica failing: the next one at once, and no polling', async () => {
    const one = await replica();
    const two = await replica();
    one.proxy.onWatch = (_req, res) => void res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
    const { watch, lines, statuses } = follow([one.proxy.url, two.proxy.url]);
    await watch.ready;
    expect(watch.status).toMatchObject({ server: two.proxy.url, transport: 'sse', failure: undefined });
    expect(lines(FAILED)[0]).toMatchObject({ server: one.proxy.url, reason: 'GET /pools/watch answered 503', next: two.proxy.url });
    expect(statuses.find((status) => status.failure !== undefined)?.failure).toEqual({ server: one.proxy.url, reason: 'GET /pools/watch answered 503' });
    expect(lines(POLLING)).toEqual([]);
    expect(one.proxy.listRequests).toBe(0);
  });

  it.each([
    { what: 'a 504', answer: (res: ServerResponse) => res.writeHead(504, { 'content-type': 'text/html' }).end('<h1>504</h1>'), reason: 'GET /pools/watch answered 504 text/html' },
    { what: 'a 200 of another type', answer: (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'), reason: 'GET /pools/watch answered 200 text/plain' },
    { what: 'a 200 without a type', answer: (res: ServerResponse) => res.writeHead(200).end(), reason: 'GET /pools/watch answered 200 without a content type' },
    {
      what: 'a stream that ends before its first event',
      answer: (res: ServerResponse) => res.writeHead(200, { 'content-type': 'Text/Event-Stream; charset=utf-8' }).end(': hello\n\n'),
      reason: 'the event stream ended before its first event',
    },
  ])('$what: the path cuts streams, so it polls GET /pools', async ({ answer, reason }) => {
    const { proxy } = await replica();
    proxy.onWatch = (_req, res) => answer(res);
    const { watch, lines } = follow([proxy.url]);
    await watch.ready;
    await waitFor(() => watch.status.transport === 'polling', { message: 'polling' });
    expect(lines(POLLING)[0]).toMatchObject({ server: proxy.url, reason });
    expect(lines(FAILED)).toEqual([]);
    expect(watch.get('us-east-1/llm/kept')).toBeDefined();
  });

  it('skips an event kind it does not know; refuses one whose data is not JSON, and reconnects', async () => {
    const { service, proxy } = await replica();
    let first = true;
    proxy.onWatch = (_req, res) => {
      const stream = openStream(res);
      if (first) {
        first = false;
        stream.write('retry: 1000\n\nevent: resync\nid: 1\ndata: {not json\n\n');
        return;
      }
      sendResync(service, stream, 'event: hello\ndata: {"a": 1}\n\n');
    };
    const { watch, lines } = follow([proxy.url]);
    await watch.ready;
    expect(lines('watch event refused; reconnecting')).toEqual([expect.objectContaining({ server: proxy.url, event: 'resync', reason: 'resync data is not JSON' })]);
    expect(watch.status.transport).toBe('sse');
    expect(watch.get('us-east-1/llm/kept')).toBeDefined();
    expect(proxy.watchRequests).toBe(2);
  });

  it('a stream silent for idleTimeoutMs is dead: ended, and (it worked under a second) a failure', async () => {
    const { service, proxy } = await replica();
    proxy.onWatch = (_req, res) => {
      const stream = openStream(res);
      sendResync(service, stream);
    };
    const { watch, lines } = follow([proxy.url], { idleTimeoutMs: 200 });
    await watch.ready;
    await waitFor(() => lines('watch stream ended').length > 0, { message: 'the idle end' });
    expect(lines('watch stream ended')[0]).toMatchObject({ server: proxy.url, reason: 'nothing received for 200 ms' });
    await waitFor(() => lines(FAILED).length > 0, { message: 'counted as a failure' });
    expect(lines(FAILED)[0]).toMatchObject({ reason: 'nothing received for 200 ms' });
    await waitFor(() => proxy.watchRequests >= 2, { message: 'the reconnect' });
  });

  it('a stream that worked for a second and ended is reconnected to the same replica, with no failure', async () => {
    const { service, proxy } = await replica();
    proxy.onWatch = (_req, res) => {
      const stream = openStream(res);
      sendResync(service, stream, '', () => {
        // Keep-alive comments, then the end a replica chooses.
        const beat = setInterval(() => stream.write(': keep-alive\n\n'), 200);
        setTimeout(() => {
          clearInterval(beat);
          stream.end();
        }, 1100);
      });
    };
    const { watch, lines } = follow([proxy.url], { idleTimeoutMs: 500 });
    await watch.ready;
    await waitFor(() => lines('watch stream ended').length > 0, { timeoutMs: 3000, message: 'the end' });
    expect(lines('watch stream ended')[0]).toMatchObject({ server: proxy.url, reason: 'the server ended the stream' });
    await waitFor(() => proxy.watchRequests >= 2, { message: 'the reconnect' });
    expect(lines(FAILED)).toEqual([]);
  });

  it('resumed with nothing to replay (only `: resumed`), the stream is open: no first-event timeout, no polling', async () => {
    const { service, proxy } = await replica();
    const seen: (string | undefined)[] = [];
    let first: ServerResponse | undefined;
    proxy.onWatch = (req, res) => {
      const stream = openStream(res);
      const lastEventId = req.headers['last-event-id'] as string | undefined;
      seen.push(lastEventId);
      if (lastEventId === undefined) {
        first = stream;
        sendResync(service, stream, 'retry: 1000\n\n');
      } else {
        stream.write('retry: 1000\n\n: resumed\n\n');
      }
    };
    const { watch, lines } = follow([proxy.url], { firstEventTimeoutMs: 300 });
    await watch.ready;
    const revision = watch.status.revision;
    first!.destroy();
    await waitFor(() => seen.length === 2, { message: 'the resume' });
    expect(seen[1]).toBe(revision);
    await waitFor(() => watch.status.transport === 'sse', { message: 'open again' });
    await throughout(600, 50, () => expect(watch.status.transport).toBe('sse'));
    expect(lines(POLLING)).toEqual([]);
    expect(proxy.listRequests).toBe(0);
    expect(watch.get('us-east-1/llm/kept')).toBeDefined();
  });
});
