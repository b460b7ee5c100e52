// Who may call what (docs/contract.md §8), through the app (no socket): write tokens guard POST /pools,
// read tokens guard every other route but the probes; a write token also reads, a read token never
// writes; every refusal is the contract's 401 error body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../src/contract/index.js';
import { postJson, request } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';

const WRITE = 'write-token.A1';
const READ = 'read~token/B2==';

const READ_ROUTES = ['/pools', '/pools?model=m', '/pools/watch', '/debug', '/debug/pools', '/debug/pools/a/b/c', '/debug/machine', '/debug/pools/watch', '/metrics', '/openapi.json', '/no-such-route'];

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function expectRefused(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  const body = errorBodySchema.parse(await response.json());
  expect(body.error.code).toBe('unauthorized');
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
}

/** GET a route and read no more than the headers (watch routes never end). */
async function get(svc: TestService, path: string, headers: Record<string, string> = {}): Promise<Response> {
  const controller = new AbortController();
  const response = await request(svc.app, path, { headers, signal: controller.signal });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    controller.abort();
    await response.body?.cancel().catch(() => undefined);
  }
  return response;
}

describe('with write and read tokens', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ socket: false, authTokens: [WRITE], readTokens: [READ], keepAliveMs: 60_000 });
  });
  afterAll(() => svc.stop());

  it.each(READ_ROUTES)('GET %s without a token, or with a wrong one, is 401', async (path) => {
    await expectRefused(await get(svc, path));
    await expectRefused(await get(svc, path, bearer('not-a-token')));
    await expectRefused(await get(svc, path, { authorization: 'Basic abc' }));
  });

  it.each(READ_ROUTES.filter((path) => path !== '/no-such-route'))('GET %s with a read token, or a write token, is served', async (path) => {
    for (const token of [READ, WRITE]) {
      const response = await get(svc, path, bearer(token));
      expect([200, 404, 503]).toContain(response.status);
      expect(response.status, `${path} with ${token === READ ? 'the read' : 'the write'} token`).not.toBe(401);
    }
  });

  it('an unknown route with a token is the usual 404', async () => {
    expect((await get(svc, '/no-such-route', bearer(READ))).status).toBe(404);
  });

  it.each(['/livez', '/healthz', '/readyz'])('%s stays open for probes', async (path) => {
    expect([200, 503]).toContain((await get(svc, path)).status);
  });

  it('POST /pools: a read token cannot write (403 insufficient_scope, RFC 6750 §3.1); a write token can', async () => {
    const readOnly = await postJson(svc.app, registration(), bearer(READ));
    expect(readOnly.status).toBe(403);
    expect(errorBodySchema.parse(await readOnly.json()).error.code).toBe('insufficient_scope');
    expect(readOnly.headers.get('www-authenticate')).toBe('Bearer realm="poolscope", error="insufficient_scope"');
    await expectRefused(await postJson(svc.app, registration()));
    expect((await postJson(svc.app, registration(), bearer(WRITE))).status).toBe(200);
    expect((await svc.store.snapshot()).records.map((r) => r.registration.name)).toEqual([registration().name]);
  });

  it('a read token refused a write stores nothing and is counted as an unauthorized heartbeat', async () => {
    await postJson(svc.app, registration({ name: 'read-only-write' }), bearer(READ));
    expect((await svc.store.snapshot()).records.map((r) => r.registration.name)).not.toContain('read-only-write');
    expect(await (await get(svc, '/metrics', bearer(READ))).text()).toMatch(/poolscope_heartbeats_total\{outcome="unauthorized"\} [1-9]/);
  });

  it('another Authorization scheme is a 401 challenge without an error code; a token that matches none is invalid_token', async () => {
    for (const [path, init] of [
      ['/pools', {}],
      ['/pools', { method: 'POST', body: JSON.stringify(registration()), headers: { 'content-type': 'application/json' } }],
    ] as const) {
      const basic = await request(svc.app, path, { ...init, headers: { ...(init as { headers?: Record<string, string> }).headers, authorization: 'Basic Zm9vOmJhcg==' } });
      expect(basic.status).toBe(401);
      expect(basic.headers.get('www-authenticate')).toBe('Bearer realm="poolscope"');
      expect(errorBodySchema.parse(await basic.json()).error.code).toBe('unauthorized');
      const wrong = await request(svc.app, path, { ...init, headers: { ...(init as { headers?: Record<string, string> }).headers, authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="poolscope", error="invalid_token"');
    }
    const none = await request(svc.app, '/pools');
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="poolscope"');
  });
});

describe('with write tokens only', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ socket: false, authTokens: [WRITE] });
  });
  afterAll(() => svc.stop());

  it('reads stay open; writes need the token', async () => {
    expect((await get(svc, '/pools')).status).toBe(200);
    expect((await get(svc, '/debug/pools')).status).toBe(200);
    await expectRefused(await postJson(svc.app, registration()));
    expect((await postJson(svc.app, registration(), bearer(WRITE))).status).toBe(200);
  });

  it('a refused write is counted as an unauthorized heartbeat', async () => {
    await postJson(svc.app, registration(), bearer('nope'));
    const metrics = await (await get(svc, '/metrics')).text();
    expect(metrics).toMatch(/poolscope_heartbeats_total\{outcome="unauthorized"\} [1-9]/);
  });
});

describe('the Authorization header, read as RFC 6750 §2.1 writes it', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ socket: false, authTokens: [WRITE], readTokens: [READ] });
  });
  afterAll(() => svc.stop());

  const post = (authorization: string) => postJson(svc.app, registration({ name: 'header' }), { authorization });

  it('a read token on a write is 403 however the scheme is cased or spaced', async () => {
    for (const header of [`bearer ${READ}`, `BEARER ${READ}`, `Bearer   ${READ}`]) {
      const response = await post(header);
      expect(response.status, header).toBe(403);
      expect(errorBodySchema.parse(await response.json()).error.code).toBe('insufficient_scope');
    }
  });

  it('a header that only holds a read token somewhere is no read token: 401, not 403', async () => {
    for (const header of [`xBearer ${READ}`, `Bearer ${READ} extra`, `Bearer ${READ}x`, `Bearer x${READ}`, `Bearer ${READ.slice(0, -2)}`, `Bearer${READ}`]) {
      const response = await post(header);
      expect(response.status, header).toBe(401);
      expect(errorBodySchema.parse(await response.json()).error.code).toBe('unauthorized');
    }
    expect((await svc.store.snapshot()).records).toEqual([]);
  });

  it('a Bearer header without a token is invalid_request; a write with a write token goes through', async () => {
    for (const header of ['Bearer', 'Bearer ', 'bearer  ']) {
      const response = await request(svc.app, '/pools', { headers: { authorization: header } });
      expect(response.status, header).toBe(401);
      expect(response.headers.get('www-authenticate'), header).toBe('Bearer realm="poolscope", error="invalid_request"');
    }
    const basic = await request(svc.app, '/pools', { headers: { authorization: 'Bearerish abc' } });
    expect(basic.headers.get('www-authenticate')).toBe('Bearer realm="poolscope"');
    expect((await post(`Bearer ${WRITE}`)).status).toBe(200);
  });
});
