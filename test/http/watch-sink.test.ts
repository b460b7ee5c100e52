// Where a watch stream's bytes go (src/http/watch-sink.ts), each sink on its own: on a Node server, the
// frames straight into the socket, one chunk each on HTTP/1.1 and unchunked on HTTP/1.0, the socket's
// unsent bytes as the backlog, end and destroy as the client sees them; off a Node server (app.request()),
// a ReadableStream whose queued bytes are the backlog.
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { chunkOf } from '../../src/http/sse.js';
import { nodeSink, SSE_HEADERS, streamSink, type WatchSink } from '../../src/http/watch-sink.js';
import { waitFor } from '../support/wait.js';
import { rawConnect, type RawConnection } from './raw-client.js';

const encoder = new TextEncoder();
const frame = (text: string) => chunkOf([encoder.encode(text)]);

describe('nodeSink: on a Node server', () => {
  let server: Server | undefined;
  let connection: RawConnection | undefined;
  afterEach(async () => {
    connection?.socket.destroy();
    server?.closeAllConnections();
    await new Promise((done) => server?.close(done) ?? done(undefined));
    server = connection = undefined;
  });

  /** A server whose one route opens a sink; resolves with the sink once a raw client's request reached it. */
  async function open(requestLine: string): Promise<{ sink: WatchSink; connection: RawConnection }> {
    let opened: (sink: WatchSink) => void;
    const sinkOpened = new Promise<WatchSink>((resolve) => (opened = resolve));
    const app = new Hono().get('/watch', (c) => {
      const node = nodeSink(c);
      if (!node) throw new Error('no Node response');
      opened(node.sink);
      return node.response;
    });
    server = createServer(getRequestListener(app.fetch));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    connection = await rawConnect(port, `${requestLine}\r\nHost: 127.0.0.1\r\n\r\n`);
    return { sink: await sinkOpened, connection };
  }

  const head = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n')).toLowerCase();
  const body = (raw: string) => raw.slice(raw.indexOf('\r\n\r\n') + 4);

  it('HTTP/1.1: the SSE head, each frame one chunk as given, the client as peer, and end() the last chunk after `last`', async () => {
    const { sink, connection } = await open('GET /watch HTTP/1.1');
    await waitFor(() => connection.received.includes('\r\n\r\n'), { message: 'the head' });
    const lines = head(connection.received).split('\r\n');
    expect(lines[0]).toBe('http/1.1 200 ok');
    expect(lines).toEqual(
      expect.arrayContaining(['content-type: text/event-stream', 'cache-control: no-cache', 'transfer-encoding: chunked', 'connection: keep-alive']),
    );
    expect(sink.peer).toBe(`127.0.0.1:${connection.socket.localPort}`);

    const closes: string[] = [];
    sink.onClose(() => closes.push('closed'));
    sink.write(frame('event: upsert\ndata: {}\n\n'));
    sink.end(frame('event: closing\ndata: {}\n\n'));
    sink.write(frame('event: late\ndata: {}\n\n'));
    await waitFor(() => connection.received.endsWith('0\r\n\r\n'), { message: 'the last chunk' });
    expect(body(connection.received)).toBe('18\r\nevent: upsert\ndata: {}\n\n\r\n19\r\nevent: closing\ndata: {}\n\n\r\n0\r\n\r\n');
    await waitFor(() => closes.length === 1, { message: 'onClose after the end' });
    // The reply is complete; the connection stays open for the next request, as after any reply.
    expect(connection.closed).toBe(false);
  });

  it('HTTP/1.0: no chunks (the stream is the rest of the connection), and end() without `last` adds nothing', async () => {
    const { sink, connection } = await open('GET /watch HTTP/1.0');
    sink.write(frame('data: 1\n\n'));
    sink.write(frame('data: 2\n\n'));
    sink.end();
    await connection.whenClosed;
    const lines = head(connection.received).split('\r\n');
    expect(lines).toContain('content-type: text/event-stream');
    expect(lines.some((line) => line.startsWith('transfer-encoding'))).toBe(false);
    expect(body(connection.received)).toBe('data: 1\n\ndata: 2\n\n');
  });

  it('counts what the client has not taken as the backlog, and none once it reads', async () => {
    const { sink, connection } = await open('GET /watch HTTP/1.1');
    await waitFor(() => connection.received.includes('\r\n\r\n'), { message: 'the head' });
    connection.socket.pause();
    const big = frame(`data: ${'x'.repeat(16 * 1024 * 1024)}\n\n`);
    sink.write(big);
    // More than the kernel's buffers take at once: the rest waits in the socket.
    expect(sink.backlogBytes).toBeGreaterThan(0);
    expect(sink.backlogBytes).toBeLessThanOrEqual(big.byteLength);
    connection.socket.resume();
    await waitFor(() => sink.backlogBytes === 0, { message: 'the backlog taken' });
  });

  it('destroy() cuts the connection; onClose fires for a listener before, and for one after, once each', async () => {
    const { sink, connection } = await open('GET /watch HTTP/1.1');
    await waitFor(() => connection.received.includes('\r\n\r\n'), { message: 'the head' });
    const closes: string[] = [];
    sink.onClose(() => closes.push('before'));
    sink.destroy();
    await connection.whenClosed;
    await waitFor(() => closes.length === 1, { message: 'onClose' });
    sink.onClose(() => closes.push('after'));
    await waitFor(() => closes.length === 2, { message: 'onClose on a closed stream' });
    expect(closes).toEqual(['before', 'after']);
    sink.write(frame('data: gone\n\n'));
    expect(body(connection.received)).toBe('');
  });

  it('the client leaving closes the sink', async () => {
    const { sink, connection } = await open('GET /watch HTTP/1.1');
    await waitFor(() => connection.received.includes('\r\n\r\n'), { message: 'the head' });
    let closed = 0;
    sink.onClose(() => (closed += 1));
    connection.socket.destroy();
    await waitFor(() => closed === 1, { message: 'onClose after the client left' });
  });

  it('is not made off a Node server (app.request())', async () => {
    let made: unknown = 'not called';
    const app = new Hono().get('/watch', (c) => {
      made = nodeSink(c);
      return c.text('');
    });
    await app.request('/watch');
    expect(made).toBeUndefined();
  });
});

describe('streamSink: a ReadableStream', () => {
  const decoder = new TextDecoder();

  it('answers 200 with the SSE headers', () => {
    const { response } = streamSink();
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toEqual(SSE_HEADERS);
    expect(SSE_HEADERS).toEqual({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  });

  it('gives the SSE bytes of each chunk; what is queued is the backlog; end() gives `last`, then the end, once', async () => {
    const { sink, response } = streamSink();
    const closes: string[] = [];
    sink.onClose(() => closes.push('closed'));
    // 0, not -0 (toBe compares with Object.is): the backlog is summed and rendered, and -0 reads as a bug.
    expect(sink.backlogBytes).toBe(0);
    sink.write(frame('data: 1\n\n'));
    sink.write(frame('data: 22\n\n'));
    expect(sink.backlogBytes).toBe(19);
    const reader = response.body!.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe('data: 1\n\n');
    expect(sink.backlogBytes).toBe(10);
    sink.end(frame('event: closing\n\n'));
    sink.end(frame('event: twice\n\n'));
    sink.write(frame('data: late\n\n'));
    expect(closes).toEqual(['closed']);
    expect(sink.backlogBytes).toBe(0);
    expect(decoder.decode((await reader.read()).value)).toBe('data: 22\n\n');
    expect(decoder.decode((await reader.read()).value)).toBe('event: closing\n\n');
    expect((await reader.read()).done).toBe(true);
    let after = 0;
    sink.onClose(() => (after += 1));
    await waitFor(() => after === 1, { message: 'onClose on a closed stream' });
  });

  it('end() without `last` ends the stream', async () => {
    const { sink, response } = streamSink();
    sink.end();
    expect(await response.text()).toBe('');
  });

  it('destroy() errors the stream once; a stream ended or cancelled is not destroyed', async () => {
    const destroyed = streamSink();
    let closed = 0;
    destroyed.sink.onClose(() => (closed += 1));
    destroyed.sink.destroy();
    destroyed.sink.destroy();
    expect(closed).toBe(1);
    await expect(destroyed.response.text()).rejects.toThrow('watch stream dropped');

    const ended = streamSink();
    ended.sink.end();
    expect(() => ended.sink.destroy()).not.toThrow();
    expect(await ended.response.text()).toBe('');

    const cancelled = streamSink();
    let cancels = 0;
    cancelled.sink.onClose(() => (cancels += 1));
    await cancelled.response.body!.cancel();
    expect(cancels).toBe(1);
    expect(() => cancelled.sink.end(frame('data: x\n\n'))).not.toThrow();
    expect(cancels).toBe(1);
  });
});
