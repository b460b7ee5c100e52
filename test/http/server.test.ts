// The listening socket (src/http/server.ts, listen) with a plain Hono app: the URL it reports for an
// IPv6 address, and a close that stops accepting at once and cuts a connection still open after its
// grace. The service's own listening (TLS, the fast path, the HTTP/1.1 checks) is driven in
// test/http/http-rfc.test.ts, heartbeat-fast-path.test.ts and test/tls/mtls.test.ts.
import { request } from 'node:http';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/server.js';

/** A route that answers its headers and never ends its body: a connection that stays busy. */
function app(): Hono {
  return new Hono()
    .get('/ok', (c) => c.text('ok'))
    .get('/endless', () => new Response(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('first')) })));
}

describe('listen', () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close(0);
    server = undefined;
  });

  it('reports an IPv6 address in brackets, and serves there', async () => {
    server = await listen({ app: app(), host: '::1', port: 0 });
    expect(server.address.family).toBe('IPv6');
    expect(server.url).toBe(`http://[::1]:${server.address.port}`);
    expect(await (await fetch(`${server.url}/ok`)).text()).toBe('ok');
  });

  it('reports an IPv4 address as it is', async () => {
    server = await listen({ app: app(), host: '127.0.0.1', port: 0 });
    expect(server.url).toBe(`http://127.0.0.1:${server.address.port}`);
  });

  it('close stops accepting, and cuts a connection still busy once its grace is over', async () => {
    const running = await listen({ app: app(), host: '127.0.0.1', port: 0 });
    const { port } = running.address;
    // A response that has started and never ends.
    const cut = new Promise<string>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/endless' }, (res) => {
        res.once('data', () => {
          closing = running.close(200);
        });
        res.on('error', () => resolve('cut'));
        res.on('close', () => resolve('cut'));
      });
      req.on('error', () => resolve('cut'));
      req.end();
    });
    let closing: Promise<void> | undefined;
    expect(await cut).toBe('cut');
    await closing;
    await expect(fetch(`http://127.0.0.1:${port}/ok`)).rejects.toThrow();
  });
});
