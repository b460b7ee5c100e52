// The listening socket (src/http/server.ts, listen) with a plain Hono app: the URL it reports for an
// IPv6 address, and a close that stops accepting at once and cuts a connection still open after its
// grace. The service's own listening (TLS, the fast path, the HTTP/1.1 checks) is driven in
// test/http/http-rfc.test.ts, heartbeat-fast-path.test.ts and test/tls/mtls.test.ts; here, HTTPS without
// client certificates, and a port already taken.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/server.js';
import { makeCertificates } from '../tls/certificates.js';

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

  it('serves HTTPS with a certificate and no client CA: any client that trusts the certificate is served', async () => {
    const certs = makeCertificates();
    try {
      server = await listen({ app: app(), host: '127.0.0.1', port: 0, tls: { certPath: certs.server.cert, keyPath: certs.server.key } });
      expect(server.url).toBe(`https://127.0.0.1:${server.address.port}`);
      const body = await new Promise<string>((resolve, reject) => {
        // No client certificate: without a client CA the server asks for none.
        const req = httpsRequest({ host: '127.0.0.1', port: server!.address.port, path: '/ok', ca: readFileSync(certs.ca) }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end();
      });
      expect(body).toBe('ok');
    } finally {
      certs.cleanup();
    }
  });

  it('refuses to start on a port another socket holds: the promise rejects with EADDRINUSE', async () => {
    server = await listen({ app: app(), host: '127.0.0.1', port: 0 });
    await expect(listen({ app: app(), host: '127.0.0.1', port: server.address.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    // The first server still serves.
    expect(await (await fetch(`${server.url}/ok`)).text()).toBe('ok');
  });
});
