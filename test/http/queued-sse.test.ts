// A stream fed by a subscription (src/http/queued-sse.ts), through app.request() (a web stream): HEAD
// gets the headers and subscribes nothing; past --max-watchers, the refusal; a stream opened while the
// server drains gets `retry:` and `closing` and nothing else; otherwise `retry:` and the first events,
// then each event as published, keep-alives, `closing` when the server drains, and on close the
// subscription, keep-alive and drain listener given back.
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { namedFrame, subscriptionSse } from '../../src/http/queued-sse.js';
import { StreamGate } from '../../src/http/stream-gate.js';

afterEach(() => {
  vi.useRealTimers();
});

const decoder = new TextDecoder();

function feed(options: { maxWatchers?: number; shutdown?: AbortSignal; keepAliveMs?: number } = {}) {
  const pushes = new Set<(event: string) => void>();
  let subscribed = 0;
  const gate = new StreamGate({ stream: 'debug', maxWatchers: options.maxWatchers ?? 10, maxBacklogBytes: 1 << 20 });
  const app = new Hono().on(['GET', 'HEAD'], '/feed', (c) =>
    subscriptionSse<string>(c, {
      first: () => ['a', 'b'],
      subscribe: (push) => {
        subscribed += 1;
        pushes.add(push);
        return () => pushes.delete(push);
      },
      frame: (event) => namedFrame('item', JSON.stringify(event)),
      keepAliveMs: options.keepAliveMs ?? 60_000,
      gate,
      ...(options.shutdown ? { shutdown: options.shutdown } : {}),
    }),
  );
  return {
    app,
    gate,
    pushes,
    subscribed: () => subscribed,
    publish: (event: string) => pushes.forEach((push) => push(event)),
  };
}

async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string, received = ''): Promise<string> {
  while (!received.includes(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before ${JSON.stringify(text)}: ${JSON.stringify(received)}`);
    received += decoder.decode(value);
  }
  return received;
}

describe('subscriptionSse', () => {
  it('frames an event as `event:` and one line of JSON', () => {
    expect(decoder.decode(namedFrame('pools', '{"n":1}'))).toBe('event: pools\ndata: {"n":1}\n\n');
  });

  it('HEAD: 200 with the stream’s headers, no body, nothing subscribed or counted', async () => {
    const { app, gate, subscribed } = feed();
    const response = await app.request('/feed', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe('');
    expect([subscribed(), gate.size]).toEqual([0, 0]);
  });

  it('past --max-watchers: refused, nothing subscribed', async () => {
    const { app, subscribed } = feed({ maxWatchers: 0 });
    expect((await app.request('/feed')).status).toBe(503);
    expect(subscribed()).toBe(0);
  });

  it('opened while the server drains: `retry:` and `closing`, then the end', async () => {
    const shutdown = new AbortController();
    shutdown.abort();
    const { app, gate, subscribed } = feed({ shutdown: shutdown.signal });
    const response = await app.request('/feed');
    expect(await response.text()).toBe('retry: 1000\n\nevent: closing\ndata: {"reason":"the replica is shutting down"}\n\n');
    expect([subscribed(), gate.size]).toEqual([0, 0]);
  });

  it('`retry:`, the first events, each published one; `closing` on drain, and everything given back', async () => {
    const shutdown = new AbortController();
    const { app, gate, pushes, publish } = feed({ shutdown: shutdown.signal });
    const reader = (await app.request('/feed')).body!.getReader();
    let received = await readUntil(reader, 'data: "b"\n\n');
    expect(received).toBe('retry: 1000\n\nevent: item\ndata: "a"\n\nevent: item\ndata: "b"\n\n');
    publish('c');
    received = await readUntil(reader, 'data: "c"\n\n', received);
    expect(gate.size).toBe(1);
    shutdown.abort();
    received = await readUntil(reader, 'event: closing', received);
    expect(received.endsWith('event: closing\ndata: {"reason":"the replica is shutting down"}\n\n')).toBe(true);
    expect((await reader.read()).done).toBe(true);
    expect([pushes.size, gate.size]).toEqual([0, 0]);
  });

  it('a stream the client left is forgotten by the drain; the others on the same signal get `closing`', async () => {
    const shutdown = new AbortController();
    const { app, gate, pushes } = feed({ shutdown: shutdown.signal, maxWatchers: 20 });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const readers = await Promise.all(Array.from({ length: 12 }, async () => (await app.request('/feed')).body!.getReader()));
      await Promise.all(readers.map((reader) => readUntil(reader, 'data: "b"')));
      await readers[0]!.cancel();
      expect([pushes.size, gate.size]).toEqual([11, 11]);
      shutdown.abort();
      for (const reader of readers.slice(1)) await readUntil(reader, 'event: closing');
      expect(pushes.size).toBe(0);
      // One listener on the signal, not one a stream (Node warns past ten).
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('keeps the connection alive with a comment each interval, until the stream closes', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { app } = feed({ keepAliveMs: 1000 });
    const reader = (await app.request('/feed')).body!.getReader();
    await readUntil(reader, 'data: "b"');
    vi.advanceTimersByTime(1000);
    await readUntil(reader, ': keep-alive\n\n');
    await reader.cancel();
    expect(vi.getTimerCount()).toBe(0);
  });
});
