// One watch connection (src/client/sse-session.ts) on its own, over a transport that hands it a stream the
// test writes: how each way a connection can end is named (the watcher picks the next replica, polls or
// reconnects on it), which request it sends, when it counts as resumed, and which events it hands on.
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { TransportError, type HttpStream, type HttpTransport, type RequestInit } from '../../src/client/http-transport.js';
import { runSseSession, type SessionEnd, type SseSessionOptions } from '../../src/client/sse-session.js';
import { routerWatchEventSchemas, type WatchEvent } from '../../src/contract/index.js';
import { captureLogs, silentLogger } from '../support/logs.js';
import { throughout } from '../support/wait.js';
import { pool as listedPool } from '../support/listed-pool.js';

const SERVER = 'http://127.0.0.1:1';

const pool = listedPool('p1');
const resync = { complete: true, revision: '5-0', pools: [pool] };
const upsert = { revision: '6-0', pool };
const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

interface Opened {
  url: string;
  init: RequestInit;
  closed: number;
}

/** A transport whose stream is `body`, answered with `status` and `contentType`; it records the request. */
function transportOf(reply: { status?: number; contentType?: string; body?: PassThrough } | (() => never)) {
  const opened: Opened[] = [];
  const transport = {
    stream: async (url: string, init: RequestInit): Promise<HttpStream> => {
      if (typeof reply === 'function') reply();
      const record: Opened = { url, init, closed: 0 };
      opened.push(record);
      const body = (reply as { body?: PassThrough }).body ?? new PassThrough();
      return {
        status: (reply as { status?: number }).status ?? 200,
        contentType: (reply as { contentType?: string }).contentType ?? 'text/event-stream',
        body: body as unknown as IncomingMessage,
        close: () => {
          record.closed++;
          body.destroy();
        },
      };
    },
  } as unknown as HttpTransport;
  return { transport, opened };
}

function session(transport: HttpTransport, overrides: Partial<SseSessionOptions> = {}) {
  const events: WatchEvent[] = [];
  const controller = new AbortController();
  let resumedCalls = 0;
  const ended = runSseSession({
    transport,
    server: SERVER,
    logger: silentLogger(),
    connectTimeoutMs: 1234,
    firstEventTimeoutMs: 5000,
    idleTimeoutMs: 5000,
    signal: controller.signal,
    onEvent: (event) => events.push(event),
    onResumed: () => resumedCalls++,
    ...overrides,
  });
  let end: SessionEnd | undefined;
  void ended.then((value) => (end = value));
  return { ended, events, controller, resumedCalls: () => resumedCalls, end: () => end };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('runSseSession: the request', () => {
  it('asks /pools/watch for an event stream, with the connect timeout and the signal, and no Last-Event-ID', async () => {
    const body = new PassThrough();
    const { transport, opened } = transportOf({ body });
    const s = session(transport);
    body.end();
    await s.ended;
    expect(opened).toHaveLength(1);
    expect(opened[0]!.url).toBe(`${SERVER}/pools/watch`);
    expect(opened[0]!.init).toStrictEqual({ accept: 'text/event-stream', timeoutMs: 1234, signal: s.controller.signal });
  });

  it('sends Last-Event-ID when resuming, and follows another list with its own schemas', async () => {
    const body = new PassThrough();
    const { transport, opened } = transportOf({ body });
    const s = session(transport, { lastEventId: '9-1', path: '/routers', eventSchemas: routerWatchEventSchemas });
    body.end(frame('upsert', upsert));
    // The pool upsert is not a router upsert: the routers' schemas refuse it.
    expect(await s.ended).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^upsert data breaks the contract at router: /) });
    expect(opened[0]!.url).toBe(`${SERVER}/routers/watch`);
    expect(opened[0]!.init.headers).toStrictEqual({ 'last-event-id': '9-1' });
  });
});

describe('runSseSession: no stream', () => {
  it('names a transport failure unreachable, with its TLS problem when there is one', async () => {
    const tls = transportOf(() => {
      throw new TransportError('certificate has expired', { tls: 'server-certificate-expired' });
    });
    expect(await session(tls.transport).ended).toStrictEqual({ kind: 'unreachable', reason: 'certificate has expired', tls: 'server-certificate-expired' });
    const plain = transportOf(() => {
      throw new TransportError('connect ECONNREFUSED');
    });
    expect(await session(plain.transport).ended).toStrictEqual({ kind: 'unreachable', reason: 'connect ECONNREFUSED' });
    const other = transportOf(() => {
      throw new RangeError('bad port');
    });
    expect(await session(other.transport).ended).toStrictEqual({ kind: 'unreachable', reason: 'RangeError: bad port' });
  });

  it('is stopped, not unreachable, when the caller aborted while connecting', async () => {
    const controller = new AbortController();
    controller.abort();
    const { transport } = transportOf(() => {
      throw new TransportError('aborted');
    });
    expect(await session(transport, { signal: controller.signal }).ended).toStrictEqual({ kind: 'stopped' });
  });

  it('takes a 5xx as a replica that cannot serve, but a 502 or 504 (a gateway) and any other reply as no event stream', async () => {
    for (const status of [500, 503, 599]) {
      const { transport, opened } = transportOf({ status, contentType: 'application/json' });
      expect(await session(transport).ended).toStrictEqual({ kind: 'unreachable', reason: `GET /pools/watch answered ${status}` });
      expect(opened[0]!.closed).toBeGreaterThan(0);
    }
    for (const [status, contentType] of [
      [502, 'text/event-stream'],
      [504, 'text/html'],
      [404, 'application/json'],
      [204, 'text/event-stream'],
      [200, 'text/html'],
    ] as const) {
      const { transport, opened } = transportOf({ status, contentType });
      expect(await session(transport).ended).toStrictEqual({ kind: 'not-sse', reason: `GET /pools/watch answered ${status} ${contentType}` });
      expect(opened[0]!.closed).toBeGreaterThan(0);
    }
    const bare = transportOf({ status: 200, contentType: '' });
    expect(await session(bare.transport).ended).toStrictEqual({ kind: 'not-sse', reason: 'GET /pools/watch answered 200 without a content type' });
  });

  it('accepts the event-stream type in any case and with parameters', async () => {
    const body = new PassThrough();
    const { transport } = transportOf({ contentType: 'Text/Event-Stream; charset=utf-8', body });
    const s = session(transport);
    body.end(frame('resync', resync));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: true, resumed: false });
    expect(s.events).toEqual([{ kind: 'resync', data: resync }]);
  });
});

describe('runSseSession: the stream', () => {
  it('hands on every event in order, skips kinds it does not know, and says the server ended it', async () => {
    const body = new PassThrough();
    const { transport, opened } = transportOf({ body });
    const s = session(transport);
    body.write(frame('resync', resync) + frame('hello', '{}') + frame('toString', '{}'));
    body.end(frame('upsert', upsert) + frame('delete', { revision: '7-0', pool: { cluster_id: 'c1', namespace: 'llm', name: 'p1' } }));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: true, resumed: false });
    expect(s.events.map((event) => [event.kind, (event.data as { revision: string }).revision])).toEqual([
      ['resync', '5-0'],
      ['upsert', '6-0'],
      ['delete', '7-0'],
    ]);
    expect(opened[0]!.closed).toBeGreaterThan(0);
  });

  it('decodes a character split across two chunks', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport);
    const bytes = Buffer.from(frame('upsert', { ...upsert, pool: { ...pool, model: 'modèle-ü' } }));
    const split = bytes.indexOf(Buffer.from('è')) + 1;
    body.write(bytes.subarray(0, split));
    await tick();
    body.end(bytes.subarray(split));
    await s.ended;
    expect(s.events).toEqual([{ kind: 'upsert', data: { ...upsert, pool: { ...pool, model: 'modèle-ü' } } }]);
  });

  it('reports resynced false when no resync came', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport);
    body.end(frame('upsert', upsert));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: false, resumed: false });
  });

  it('is no event stream when it ends before its first event (comments do not count)', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport);
    body.end(': keep-alive\n\n' + frame('hello', '{}'));
    expect(await s.ended).toStrictEqual({ kind: 'not-sse', reason: 'the event stream ended before its first event' });
    expect(s.events).toEqual([]);
  });

  it('ends on a broken connection with its error, after the stream had worked', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport);
    body.write(frame('resync', resync));
    await tick();
    body.destroy(new Error('socket hang up'));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'socket hang up', resynced: true, resumed: false });
  });

  it("takes the server's overloaded as a refusal (try another replica) and hands on nothing after it", async () => {
    const body = new PassThrough();
    const { transport, opened } = transportOf({ body });
    const s = session(transport);
    body.write(frame('overloaded', 'max-watchers 1') + frame('resync', resync));
    expect(await s.ended).toStrictEqual({ kind: 'unreachable', reason: 'the replica refused the watch: max-watchers 1' });
    expect(s.events).toEqual([]);
    expect(opened[0]!.closed).toBeGreaterThan(0);
  });

  it("takes the server's closing as an end, keeping what the stream had done", async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport);
    body.write(frame('resync', resync));
    await tick();
    body.write(frame('closing', 'draining') + frame('upsert', upsert));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the replica ended the stream (closing)', resynced: true, resumed: false });
    expect(s.events.map((event) => event.kind)).toEqual(['resync']);
  });

  it('refuses an event that is not JSON or breaks the contract, logs why, and hands on nothing after it', async () => {
    const cases: [string, string, string][] = [
      ['upsert', '{"revision":', 'upsert data is not JSON'],
      ['upsert', JSON.stringify({ revision: '1', pool: { ...pool, model: 7 } }), 'upsert data breaks the contract at pool.model: '],
      ['delete', '3', 'delete data breaks the contract at the top: '],
    ];
    for (const [event, data, reason] of cases) {
      const logs = captureLogs();
      const body = new PassThrough();
      const s = session(transportOf({ body }).transport, { logger: logs.logger });
      body.write(`event: ${event}\ndata: ${data}\n\n` + frame('resync', resync));
      const end = await s.ended;
      expect(end).toMatchObject({ kind: 'invalid' });
      expect((end as { reason: string }).reason.startsWith(reason)).toBe(true);
      if (reason.endsWith(': ')) expect((end as { reason: string }).reason.length).toBeGreaterThan(reason.length);
      expect(s.events).toEqual([]);
      expect(logs.warnings().map(({ server, event: kind, reason: why, msg }) => ({ server, kind, why, msg }))).toEqual([
        { server: SERVER, kind: event, why: (end as { reason: string }).reason, msg: 'watch event refused; reconnecting' },
      ]);
    }
  });

  it('is stopped when the caller aborts mid-stream', async () => {
    const body = new PassThrough();
    const { transport, opened } = transportOf({ body });
    const s = session(transport);
    body.write(frame('resync', resync));
    await tick();
    s.controller.abort();
    expect(await s.ended).toStrictEqual({ kind: 'stopped' });
    expect(opened[0]!.closed).toBeGreaterThan(0);
  });
});

describe('runSseSession: a caller that aborts as the stream opens', () => {
  /** A transport that answers though the caller aborted while it connected (the abort raced the headers). */
  function racing(controller: AbortController, body: PassThrough) {
    const { transport, opened } = transportOf({ body });
    const stream = transport.stream.bind(transport);
    (transport as { stream: HttpTransport['stream'] }).stream = async (url, init) => {
      controller.abort();
      return stream(url, init);
    };
    return { transport, opened };
  }

  it('is stopped, not ended, when that stream then ends or breaks', async () => {
    for (const finish of [(body: PassThrough) => body.end(frame('resync', resync)), (body: PassThrough) => body.destroy(new Error('reset'))]) {
      const controller = new AbortController();
      const body = new PassThrough();
      const s = session(racing(controller, body).transport, { signal: controller.signal });
      await tick();
      finish(body);
      expect(await s.ended).toStrictEqual({ kind: 'stopped' });
    }
  });

  it('lets go of the signal when it ends: an abort after that closes nothing again', async () => {
    const body = new PassThrough();
    const { transport, opened } = transportOf({ body });
    const s = session(transport);
    body.end(frame('resync', resync));
    await s.ended;
    const closed = opened[0]!.closed;
    s.controller.abort();
    expect(opened[0]!.closed).toBe(closed);
  });
});

describe('runSseSession: its timers', () => {
  it('is no event stream when no event comes in time, though comments do (a buffering proxy)', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport, { firstEventTimeoutMs: 150, idleTimeoutMs: 60_000 });
    const keepAlive = setInterval(() => body.write(': keep-alive\n\n'), 20);
    try {
      expect(await s.ended).toStrictEqual({ kind: 'not-sse', reason: 'no event within 150 ms' });
    } finally {
      clearInterval(keepAlive);
    }
  });

  it('after its first event, ends on silence, and any byte (a keep-alive comment) keeps it open', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport, { firstEventTimeoutMs: 60_000, idleTimeoutMs: 500 });
    body.write(frame('resync', resync));
    // More than twice the silence timeout, a comment every 50 ms: still open.
    await throughout(1200, 50, () => {
      expect(s.end()).toBeUndefined();
      body.write(': keep-alive\n\n');
    });
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'nothing received for 500 ms', resynced: true, resumed: false });
  });

  it('arms the silence timer with its first event, not the first-event timer again', async () => {
    const body = new PassThrough();
    const started = Date.now();
    const s = session(transportOf({ body }).transport, { firstEventTimeoutMs: 60_000, idleTimeoutMs: 200 });
    body.write(frame('upsert', upsert));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'nothing received for 200 ms', resynced: false, resumed: false });
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('runSseSession: resuming', () => {
  it('has resumed when its first event is not a resync', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport, { lastEventId: '5-0' });
    body.end(frame('upsert', upsert) + frame('upsert', upsert));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: false, resumed: true });
    expect(s.resumedCalls()).toBe(1);
    expect(s.events).toHaveLength(2);
  });

  it('has not resumed when the server answers with a resync (the id was too old)', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport, { lastEventId: '5-0' });
    body.end(frame('resync', resync) + frame('upsert', upsert));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: true, resumed: false });
    expect(s.resumedCalls()).toBe(0);
  });

  it('never counts as resumed without a Last-Event-ID, whatever comes first', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport);
    body.end(': resumed\n\n' + frame('upsert', upsert));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: false, resumed: false });
    expect(s.resumedCalls()).toBe(0);
    // `: resumed` alone opens nothing either.
    const alone = new PassThrough();
    const t = session(transportOf({ body: alone }).transport);
    alone.end(': resumed\n\n');
    expect(await t.ended).toStrictEqual({ kind: 'not-sse', reason: 'the event stream ended before its first event' });
  });

  it('takes a resync in the same bytes as `: resumed` as the answer (not resumed)', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport, { lastEventId: '5-0' });
    body.end(': resumed\n\n' + frame('resync', resync));
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: true, resumed: false });
    expect(s.resumedCalls()).toBe(0);
  });

  it('has resumed with nothing to replay when the server says `: resumed`, and is open from then on', async () => {
    const body = new PassThrough();
    const s = session(transportOf({ body }).transport, { lastEventId: '5-0', firstEventTimeoutMs: 150, idleTimeoutMs: 60_000 });
    body.write(': resumed\n\n');
    // Past three times the first-event timeout: the comment opened it.
    await throughout(450, 50, () => expect(s.end()).toBeUndefined());
    expect(s.resumedCalls()).toBe(1);
    // Later comments (keep-alives, or the same words again) do not resume it again.
    body.write(': resumed\n\n');
    await tick();
    body.end(': keep-alive\n\n');
    expect(await s.ended).toStrictEqual({ kind: 'ended', reason: 'the server ended the stream', resynced: false, resumed: true });
    expect(s.resumedCalls()).toBe(1);
  });

  it('does not take another comment, or a half-read event after `: resumed`, as resumed', async () => {
    const other = new PassThrough();
    const a = session(transportOf({ body: other }).transport, { lastEventId: '5-0', firstEventTimeoutMs: 150 });
    other.write(': keep-alive\n\n');
    expect(await a.ended).toStrictEqual({ kind: 'not-sse', reason: 'no event within 150 ms' });
    expect(a.resumedCalls()).toBe(0);

    const half = new PassThrough();
    const b = session(transportOf({ body: half }).transport, { lastEventId: '5-0', firstEventTimeoutMs: 150 });
    half.write(': resumed\n\nevent: upsert\n');
    expect(await b.ended).toStrictEqual({ kind: 'not-sse', reason: 'no event within 150 ms' });
    expect(b.resumedCalls()).toBe(0);
  });
});
