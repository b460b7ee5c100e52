// HTTP by the RFCs (docs/contract.md §11), each over a raw socket, byte for byte as a client sends it:
// Host (RFC 9112 §3.2), Expect (RFC 9110 §10.1.1), the request target's length (414), a Content-Encoding
// on a heartbeat (415), the Date and the error body on every refusal the parser raises, and the
// Authorization challenges of RFC 6750 §3.1. Every refusal leaves the store as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, type ErrorCode } from '../../src/contract/index.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { rawConnect, type RawConnection } from './raw-client.js';

interface RawResponse {
  status: number;
  headers: Map<string, string[]>;
  body: string;
}

/** The first response on a connection: status, headers (lower-case names, every value) and body. */
function firstResponse(connection: RawConnection): RawResponse | undefined {
  const text = connection.received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, headEnd).split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const rest = text.slice(headEnd + 4);
  if (headers.get('transfer-encoding')?.[0] === 'chunked') {
    const body = dechunk(rest);
    return body === undefined ? undefined : { status, headers, body };
  }
  const length = Number(headers.get('content-length')?.[0] ?? NaN);
  if (Number.isFinite(length) && Buffer.byteLength(rest, 'latin1') < length) return undefined;
  return { status, headers, body: Number.isFinite(length) ? rest.slice(0, length) : rest };
}

/** A chunked body, once its last chunk arrived. */
function dechunk(text: string): string | undefined {
  let body = '';
  for (let at = 0; ; ) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (size === 0) return body;
    if (text.length < lineEnd + 2 + size + 2) return undefined;
    body += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

async function exchange(port: number, request: string | Buffer): Promise<{ connection: RawConnection; response: RawResponse }> {
  const connection = await rawConnect(port, '');
  connection.socket.write(request);
  const response = await waitFor(() => firstResponse(connection), { message: `a response to ${String(request).slice(0, 60)}` });
  return { connection, response };
}

/** The contract's error body with `code`, and a Date header (RFC 9110 §6.6.1). */
function expectError(response: RawResponse, status: number, code: ErrorCode): void {
  expect(response.status).toBe(status);
  expect(errorBodySchema.parse(JSON.parse(response.body)).error.code).toBe(code);
  expect(response.headers.get('content-type')?.[0]).toMatch(/^application\/json/);
  const date = response.headers.get('date')?.[0];
  expect(date, 'Date').toBeDefined();
  expect(Math.abs(Date.parse(date!) - Date.now())).toBeLessThan(60_000);
}

const json = (body: unknown) => JSON.stringify(body);

function post(body: string, headers: string[] = []): string {
  return ['POST /pools HTTP/1.1', 'Host: poolscope', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, ...headers, '', body].join('\r\n');
}

describe('HTTP by the RFCs, over a raw socket', () => {
  let svc: TestService;
  const stored = async () => (await svc.store.snapshot()).records.map((r) => r.registration.name).sort();
  beforeAll(async () => {
    svc = await startService({ leaseMs: 60_000 });
  });
  afterAll(() => svc.stop());

  it('two Host headers: 400 with the error body', async () => {
    const { response } = await exchange(svc.port, 'GET /livez HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n');
    expectError(response, 400, 'bad_request');
    const { response: heartbeat } = await exchange(svc.port, post(json(registration({ name: 'two-hosts' })), ['Host: other']));
    expectError(heartbeat, 400, 'bad_request');
    expect(await stored()).not.toContain('two-hosts');
  });

  it('no Host on HTTP/1.1: 400 with the error body; HTTP/1.0 needs none', async () => {
    const { response } = await exchange(svc.port, 'GET /livez HTTP/1.1\r\n\r\n');
    expectError(response, 400, 'bad_request');
    expect(JSON.parse(response.body).error.message).toMatch(/Host/);
    const { response: old } = await exchange(svc.port, 'GET /livez HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it('an Expect other than 100-continue: 417 with the error body', async () => {
    const { response } = await exchange(svc.port, 'GET /livez HTTP/1.1\r\nHost: p\r\nExpect: foo\r\n\r\n');
    expectError(response, 417, 'expectation_failed');
  });

  it('Expect: 100-continue with a declared body over the limit: 413 at once, never 100 Continue', async () => {
    const head = 'POST /pools HTTP/1.1\r\nHost: p\r\nContent-Type: application/json\r\nContent-Length: 70000\r\nExpect: 100-continue\r\n\r\n';
    const { connection, response } = await exchange(svc.port, head);
    expect(connection.received).not.toContain('100 Continue');
    expectError(response, 413, 'payload_too_large');
    await connection.whenClosed;
  });

  it('Expect: 100-continue with a body within the limit: 100 Continue, then the heartbeat', async () => {
    const body = json(registration({ name: 'continued' }));
    const connection = await rawConnect(svc.port, '');
    connection.socket.write(`POST /pools HTTP/1.1\r\nHost: p\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
    await waitFor(() => connection.received.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), { message: '100 Continue' });
    connection.socket.write(body);
    const response = await waitFor(() => firstResponse(connection), { message: 'the reply' });
    expect(response.status).toBe(200);
    expect(await stored()).toContain('continued');
    connection.socket.destroy();
  });

  it('a request target over 8,192 bytes: 414 with the error body, whether the parser takes the head or not', async () => {
    for (const length of [9000, 20_000]) {
      const { response } = await exchange(svc.port, `GET /pools?model=${'m'.repeat(length)} HTTP/1.1\r\nHost: p\r\n\r\n`);
      expectError(response, 414, 'uri_too_long');
    }
    // Long headers are still 431.
    const { response } = await exchange(svc.port, `GET /pools HTTP/1.1\r\nHost: p\r\nX-Long: ${'h'.repeat(20_000)}\r\n\r\n`);
    expectError(response, 431, 'headers_too_large');
  });

  it('a Content-Encoding on POST /pools: 415 with the error body, nothing stored (not the body echoed)', async () => {
    const gzipped = Buffer.from('1f8b0800000000000003ab56ca4bcc4d55b252ca4c2ecfcc4b55aa050036a4e0b613000000', 'hex');
    for (const [name, body] of [
      ['encoded-gzip', gzipped.toString('latin1')],
      ['encoded-json', json(registration({ name: 'encoded-json' }))],
    ] as const) {
      const { response } = await exchange(svc.port, post(body, ['Content-Encoding: gzip']));
      expectError(response, 415, 'unsupported_media_type');
      expect(response.body).not.toContain('\u001f');
      expect(await stored()).not.toContain(name);
    }
  });

  it('every error the parser raises carries Date and the error body', async () => {
    const requests: [string, number, ErrorCode][] = [
      ['GARBAGE\r\n\r\n', 400, 'bad_request'],
      ['GET /pools HTTP/1.1\r\nHost: p\r\nContent-Length: x\r\n\r\n', 400, 'bad_request'],
      ['GET /pools HTTP/1.1\r\nHost: p\r\nBad Header: x\r\n\r\n', 400, 'bad_request'],
      ['POST /pools HTTP/1.1\r\nHost: p\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, 'bad_request'],
      [`GET /pools HTTP/1.1\r\nHost: p\r\nX-Long: ${'h'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ];
    for (const [request, status, code] of requests) {
      const { response } = await exchange(svc.port, request);
      expectError(response, status, code);
    }
  });
});

describe('Authorization over a raw socket (RFC 6750 §3.1)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 60_000, authTokens: ['write.token'], readTokens: ['read.token'] });
  });
  afterAll(() => svc.stop());

  it('another scheme: 401 with a challenge that names no error code', async () => {
    for (const request of [
      'GET /pools HTTP/1.1\r\nHost: p\r\nAuthorization: Basic Zm9vOmJhcg==\r\n\r\n',
      post(json(registration()), ['Authorization: Basic Zm9vOmJhcg==']),
    ]) {
      const { response } = await exchange(svc.port, request);
      expectError(response, 401, 'unauthorized');
      expect(response.headers.get('www-authenticate')).toEqual(['Bearer realm="poolscope"']);
    }
  });

  it('a read token on a write: 403 insufficient_scope, nothing stored', async () => {
    const { response } = await exchange(svc.port, post(json(registration({ name: 'by-reader' })), ['Authorization: Bearer read.token']));
    expectError(response, 403, 'insufficient_scope');
    expect(response.headers.get('www-authenticate')).toEqual(['Bearer realm="poolscope", error="insufficient_scope"']);
    expect((await svc.store.snapshot()).records).toHaveLength(0);
    const { response: written } = await exchange(svc.port, post(json(registration()), ['Authorization: Bearer write.token']));
    expect(written.status).toBe(200);
  });
});
