// What every event stream shares (src/http/sse.ts, docs/contract.md §11), byte for byte: the `retry:`
// block, an event as one HTTP/1.1 chunk and back, which Accept headers name an SSE client, and a refused
// watcher's answer to each kind of client.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { acceptsEventStream, chunkOf, CLOSING_FRAME, refuseWatcher, retryFrame, STREAM_RETRY_FRAME, unchunk } from '../../src/http/sse.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string) => encoder.encode(text);

describe('frames', () => {
  it('`retry:` in whole milliseconds, as its own block; every stream starts with 1 s; the drain’s closing event', () => {
    expect(decoder.decode(retryFrame(2500.4))).toBe('retry: 2500\n\n');
    expect(decoder.decode(STREAM_RETRY_FRAME)).toBe('retry: 1000\n\n');
    expect(decoder.decode(CLOSING_FRAME)).toBe('event: closing\ndata: {"reason":"the replica is shutting down"}\n\n');
  });

  it('an event as one chunk: its size in hex, its parts in order, CRLF', () => {
    const data = 'x'.repeat(300);
    expect(decoder.decode(chunkOf([bytes('event: upsert\n'), bytes(`data: ${data}\n\n`)]))).toBe(`142\r\nevent: upsert\ndata: ${data}\n\n\r\n`);
    expect(decoder.decode(chunkOf([bytes('a')]))).toBe('1\r\na\r\n');
    expect(decoder.decode(chunkOf([]))).toBe('0\r\n\r\n');
  });

  it('unchunks one chunk without a copy, and several into one', () => {
    const one = chunkOf([bytes('data: 1\n\n')]);
    const bare = unchunk(one);
    expect(decoder.decode(bare)).toBe('data: 1\n\n');
    expect(bare.buffer).toBe(one.buffer);
    const several = new Uint8Array([...one, ...chunkOf([bytes('x'.repeat(20))]), ...chunkOf([bytes('data: 3\n\n')])]);
    expect(decoder.decode(unchunk(several))).toBe(`data: 1\n\n${'x'.repeat(20)}data: 3\n\n`);
  });
});

describe('acceptsEventStream', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['text/*', false],
    ['application/json', false],
    ['text/event-stream', true],
    [' Text/Event-Stream ; charset=utf-8', true],
    ['application/json, text/event-stream', true],
    ['text/event-stream, application/json', true],
    ['text/event-stream;q=0', false],
    ['text/event-stream; Q = 0.000', false],
    ['text/event-stream;q=0.5', true],
    ['text/event-stream;q=0.01', true],
    ['text/event-stream;q=0, application/json', false],
  ])('%j: %s', (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });
});

describe('refuseWatcher', () => {
  const app = new Hono().get('/watch', (c) =>
    refuseWatcher(c, { retryAfterSecs: 3, error: new ApiError(503, 'too_many_watchers', 'this replica serves 2 watch streams already') }),
  );
  const body = { error: { code: 'too_many_watchers', message: 'this replica serves 2 watch streams already' } };

  it('to an SSE client: 200, `retry:` of the back-off, the error as an `overloaded` event, and the end', async () => {
    const response = await app.request('/watch', { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toEqual({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    expect(await response.text()).toBe(`retry: 3000\nevent: overloaded\ndata: ${JSON.stringify(body)}\n\n`);
  });

  it('to anyone else: the status of the error, its body and Retry-After', async () => {
    const response = await app.request('/watch');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toEqual(body);
  });
});
