// Server-Sent Events the way standard clients need them (docs/contract.md §11), with clients nobody here
// wrote: the `eventsource` package (WHATWG) and Chromium's own EventSource, through a TCP proxy that cuts
// connections, and against `--max-watchers 1`. Over a raw socket: every stream starts with `retry:`; a
// refused watcher that accepts event streams gets 200, `retry:` of the back-off, `event: overloaded` and
// the end (others 503 + Retry-After); on drain every stream gets `event: closing`, then the last chunk; a
// cut connection has neither, so a fetch-based client sees an incomplete stream, not an end.
import { EventSource } from 'eventsource';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../debug/support/chromium.js';
import { stopAfterEach } from '../support/cleanup.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';
import { rawConnect, WATCH_REQUEST } from './raw-client.js';

const stopLater = stopAfterEach();

async function serviceBehindProxy(options: { maxWatchers?: number } = {}): Promise<{ svc: TestService; proxy: TcpProxy; url: string }> {
  const svc = stopLater(await startService({ leaseMs: 60_000, maxWatchers: options.maxWatchers ?? 100 }));
  const proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: svc.port } });
  stopLater({ stop: () => proxy.close() });
  return { svc, proxy, url: `http://127.0.0.1:${proxy.port}` };
}

/** Dechunked text of an HTTP/1.1 chunked body so far, and whether its last chunk came. */
function chunks(raw: string): { text: string; complete: boolean } {
  let at = raw.indexOf('\r\n\r\n') + 4;
  let text = '';
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd === -1) return { text, complete: false };
    const size = parseInt(raw.slice(at, lineEnd), 16);
    if (size === 0) return { text, complete: true };
    if (raw.length < lineEnd + 2 + size + 2) return { text, complete: false };
    text += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

describe('SSE over a raw socket', () => {
  it('every stream starts with retry:, chunked; on drain each gets event: closing and the last chunk', async () => {
    const svc = stopLater(await startService({ leaseMs: 60_000 }));
    const watch = await rawConnect(svc.port, WATCH_REQUEST);
    const debug = await rawConnect(svc.port, 'GET /debug/pools/watch HTTP/1.1\r\nHost: p\r\nAccept: text/event-stream\r\n\r\n');
    for (const connection of [watch, debug]) {
      await waitFor(() => chunks(connection.received).text.includes('\n\n'), { message: 'the first bytes' });
      expect(connection.received).toMatch(/^HTTP\/1\.1 200 [^]*\r\ntransfer-encoding: chunked\r\n/i);
      expect(chunks(connection.received).text).toMatch(/^retry: 1000\n\n/);
    }
    await waitFor(() => chunks(debug.received).text.includes('event: snapshot'), { message: 'the snapshot' });
    void svc.stop();
    for (const connection of [watch, debug]) {
      await connection.whenClosed;
      const { text, complete } = chunks(connection.received);
      expect(text).toMatch(/event: closing\ndata: \{"reason":"[^"]+"\}\n\n$/);
      expect(complete, 'the last chunk').toBe(true);
    }
  });

  it('on HTTP/1.0 (no chunks) the same events as plain bytes: the stream is the rest of the connection', async () => {
    const svc = stopLater(await startService({ leaseMs: 60_000 }));
    const old = await rawConnect(svc.port, 'GET /pools/watch HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n');
    await waitFor(() => old.received.includes('event: resync'), { message: 'the resync' });
    expect(old.received).not.toMatch(/transfer-encoding/i);
    expect(old.received.slice(old.received.indexOf('\r\n\r\n') + 4)).toMatch(/^retry: 1000\n\nevent: resync\nid: \S+\ndata: \{/);
    void svc.stop();
    await old.whenClosed;
    expect(old.received).toMatch(/event: closing\ndata: \{"reason":"[^"]+"\}\n\n$/);
  });

  it('--max-watchers: an SSE client gets 200, retry: of the back-off, event: overloaded and the end; others keep 503 + Retry-After', async () => {
    const svc = stopLater(await startService({ leaseMs: 60_000, maxWatchers: 1 }));
    const first = await rawConnect(svc.port, WATCH_REQUEST);
    await waitFor(() => first.received.includes('event: resync'), { message: 'the first stream' });

    const sse = await fetch(`${svc.url}/pools/watch`, { headers: { accept: 'text/event-stream' } });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    const body = await sse.text();
    expect(body).toMatch(/^retry: 5000\nevent: overloaded\ndata: \{"error":\{"code":"too_many_watchers","message":"[^"]+"\}\}\n\n$/);

    for (const accept of [undefined, 'application/json', '*/*']) {
      const plain = await fetch(`${svc.url}/pools/watch`, { headers: accept === undefined ? {} : { accept } });
      expect(plain.status, String(accept)).toBe(503);
      expect(plain.headers.get('retry-after')).toBe('5');
      expect((await plain.json()).error.code).toBe('too_many_watchers');
    }
    first.socket.destroy();
  });

  it('a cut connection is an incomplete stream to a fetch client; an end the server chose is a complete one', async () => {
    const { svc, proxy, url } = await serviceBehindProxy();
    const read = async (act: () => void) => {
      const response = await fetch(`${url}/pools/watch`, { headers: { accept: 'text/event-stream' } });
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('event: resync')) text += new TextDecoder().decode((await reader.read()).value);
      act();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return { text, ended: 'done' as const };
          text += new TextDecoder().decode(value);
        }
      } catch {
        return { text, ended: 'error' as const };
      }
    };
    // A proxy that ends the connection politely (a FIN, no RST) mid-stream: an error, not an end.
    const cut = await read(() => proxy.closeExisting());
    expect(cut.ended).toBe('error');
    expect(cut.text).not.toContain('event: closing');
    // The replica drains: a last event and a complete message.
    const drained = await read(() => void svc.stop());
    expect(drained.ended).toBe('done');
    expect(drained.text).toMatch(/event: closing\n/);
  });
});

describe('the eventsource package (WHATWG)', () => {
  const sources: EventSource[] = [];
  afterEach(() => sources.splice(0).forEach((s) => s.close()));
  const open = (url: string) => {
    const source = new EventSource(url);
    sources.push(source);
    const seen: { type: string; data: string; lastEventId: string }[] = [];
    for (const type of ['resync', 'upsert', 'delete', 'overloaded', 'closing']) {
      source.addEventListener(type, (event) => seen.push({ type, data: event.data, lastEventId: event.lastEventId }));
    }
    return { source, seen };
  };

  it('reconnects by itself after a cut, with Last-Event-ID, and gets only what it missed', async () => {
    const { svc, proxy, url } = await serviceBehindProxy();
    expect((await postJson(svc.url, registration({ name: 'a' }))).status).toBe(200);
    const { source, seen } = open(`${url}/pools/watch`);
    await waitFor(() => seen.some((e) => e.type === 'resync' && e.data.includes('"name":"a"')), { message: 'the resync' });
    proxy.reset();
    expect((await postJson(svc.url, registration({ name: 'b' }))).status).toBe(200);
    await waitFor(() => seen.some((e) => e.type === 'upsert' && e.data.includes('"name":"b"')), { message: 'b after the reconnect', timeoutMs: 10_000 });
    expect(seen.filter((e) => e.type === 'resync')).toHaveLength(1);
    expect(source.readyState).toBe(EventSource.OPEN);
  });

  it('refused by --max-watchers 1, it stays CONNECTING and gets in by itself once the other stream closes', async () => {
    const { url } = await serviceBehindProxy({ maxWatchers: 1 });
    const first = open(`${url}/pools/watch`);
    await waitFor(() => first.seen.some((e) => e.type === 'resync'), { message: 'the first stream' });
    const second = open(`${url}/pools/watch`);
    await waitFor(() => second.seen.some((e) => e.type === 'overloaded'), { message: 'overloaded' });
    expect(JSON.parse(second.seen[0]!.data).error.code).toBe('too_many_watchers');
    expect(second.source.readyState).toBe(EventSource.CONNECTING);
    first.source.close();
    await waitFor(() => second.seen.some((e) => e.type === 'resync'), { message: 'the retried stream', timeoutMs: 15_000 });
    expect(second.source.readyState).toBe(EventSource.OPEN);
  });
});

describe("Chromium's EventSource", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  /** A page on the proxy's origin (EventSource is same-origin here), recording each event in `window.seen`. */
  async function pageOn(url: string): Promise<Page> {
    const page = await browser.newPage();
    stopLater({ stop: () => page.close() });
    await page.goto(`${url}/livez`);
    return page;
  }
  const follow = (page: Page, name: string) =>
    page.evaluate((name) => {
      const w = window as unknown as Record<string, unknown>;
      const seen: { type: string; data: string }[] = [];
      const source = new globalThis.EventSource('/pools/watch');
      w[name] = { source, seen };
      for (const type of ['resync', 'upsert', 'delete', 'overloaded', 'closing']) {
        source.addEventListener(type, (event) => seen.push({ type, data: (event as MessageEvent).data }));
      }
    }, name);
  const seen = (page: Page, name: string) =>
    page.evaluate((name) => {
      const entry = (window as unknown as Record<string, { source: EventSource; seen: { type: string; data: string }[] }>)[name]!;
      return { readyState: entry.source.readyState, seen: entry.seen };
    }, name);

  it('reconnects by itself after a cut, with Last-Event-ID, and gets only what it missed', async () => {
    const { svc, proxy, url } = await serviceBehindProxy();
    expect((await postJson(svc.url, registration({ name: 'a' }))).status).toBe(200);
    const page = await pageOn(url);
    await follow(page, 'w');
    await waitFor(async () => (await seen(page, 'w')).seen.some((e) => e.type === 'resync'), { message: 'the resync' });
    proxy.reset();
    expect((await postJson(svc.url, registration({ name: 'b' }))).status).toBe(200);
    await waitFor(async () => (await seen(page, 'w')).seen.some((e) => e.type === 'upsert' && e.data.includes('"name":"b"')), {
      message: 'b after the reconnect',
      timeoutMs: 10_000,
    });
    expect((await seen(page, 'w')).seen.filter((e) => e.type === 'resync')).toHaveLength(1);
  });

  it('refused by --max-watchers 1, it gets in by itself once the other stream closes', async () => {
    const { url } = await serviceBehindProxy({ maxWatchers: 1 });
    const page = await pageOn(url);
    await follow(page, 'first');
    await waitFor(async () => (await seen(page, 'first')).seen.some((e) => e.type === 'resync'), { message: 'the first stream' });
    await follow(page, 'second');
    await waitFor(async () => (await seen(page, 'second')).seen.some((e) => e.type === 'overloaded'), { message: 'overloaded' });
    expect((await seen(page, 'second')).readyState).toBe(0);
    await page.evaluate(() => (window as unknown as { first: { source: EventSource } }).first.source.close());
    await waitFor(async () => (await seen(page, 'second')).seen.some((e) => e.type === 'resync'), { message: 'the retried stream', timeoutMs: 15_000 });
    expect((await seen(page, 'second')).readyState).toBe(1);
  });
});
