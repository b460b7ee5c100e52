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

  it.each(['/healthz', '/readyz'])('%s stays open for probes', async (path) => {
    expect([200, 503]).toContain((await get(svc, path)).status);
  });

  it('POST /pools: a read token cannot write; a write token can', async () => {
    await expectRefused(await postJson(svc.app, registration(), bearer(READ)));
    await expectRefused(await postJson(svc.app, registration()));
    expect((await postJson(svc.app, registration(), bearer(WRITE))).status).toBe(200);
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
