// Scoped writes (docs/contract.md §8): a write token with scopes writes only what they cover; anything else
// is `403 forbidden` naming the pool and the token's scopes (never the token), counted, and stores
// nothing; an unscoped token writes anything, as before; the scopes are reloaded with the file; the first
// write of each key by each credential is logged with the scope that allowed it; and no heartbeat with a
// credential to check takes the Node-level fast path.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../src/contract/index.js';
import { nodeFastPathOf } from '../../src/http/app.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { eventually } from '../support/wait.js';
import { metricSample } from './raw-client.js';

const EAST = 'east-token.1';
const LLM = 'llm-token.2';
const ALL = 'all-token.3';
const TOKENS = [`${EAST} us-east-1 us-east-2/llm`, `${LLM} eu-west-*/llm`, ALL];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const pool = (cluster_id: string, namespace = 'llm', name = 'p1') => registration({ cluster_id, namespace, name });

async function expectForbidden(response: Response, message: string): Promise<void> {
  expect(response.status).toBe(403);
  const body = errorBodySchema.parse(await response.json());
  expect(body.error).toEqual({ code: 'forbidden', message });
}

const running: TestService[] = [];
afterEach(async () => {
  for (const svc of running.splice(0)) await svc.stop();
});
async function start(options: Parameters<typeof startService>[0]): Promise<TestService> {
  const svc = await startService(options);
  running.push(svc);
  return svc;
}

describe('scoped write tokens', () => {
  it('write only what their scopes cover: anything else is 403 naming the pool and the scopes, stores nothing, and is counted', async () => {
    const svc = await start({ authTokens: TOKENS });
    expect((await postJson(svc.url, pool('us-east-1', 'any-ns'), bearer(EAST))).status).toBe(200);
    expect((await postJson(svc.url, pool('us-east-2', 'llm'), bearer(EAST))).status).toBe(200);
    await expectForbidden(
      await postJson(svc.url, pool('us-east-2', 'other'), bearer(EAST)),
      'the bearer token of --auth-token-file line 1 may not write pool us-east-2/other/p1: its scopes are us-east-1, us-east-2/llm',
    );
    await expectForbidden(
      await postJson(svc.url, pool('eu-west-1', 'llm', 'stolen'), bearer(EAST)),
      'the bearer token of --auth-token-file line 1 may not write pool eu-west-1/llm/stolen: its scopes are us-east-1, us-east-2/llm',
    );
    expect((await postJson(svc.url, pool('eu-west-3', 'llm'), bearer(LLM))).status).toBe(200);
    await expectForbidden(
      await postJson(svc.url, pool('eu-west-3', 'other'), bearer(LLM)),
      'the bearer token of --auth-token-file line 2 may not write pool eu-west-3/other/p1: its scopes are eu-west-*/llm',
    );
    // An unscoped token writes anything, as before.
    expect((await postJson(svc.url, pool('anywhere', 'other', 'free'), bearer(ALL))).status).toBe(200);

    // Nothing of the refused writes was stored.
    const stored = (await svc.store.snapshot()).records.map((r) => `${r.registration.cluster_id}/${r.registration.namespace}/${r.registration.name}`).sort();
    expect(stored).toEqual(['anywhere/other/free', 'eu-west-3/llm/p1', 'us-east-1/any-ns/p1', 'us-east-2/llm/p1']);
    expect(await metricSample(svc.url, 'poolscope_heartbeats_total', { outcome: 'forbidden' })).toBe(3);
    expect(await metricSample(svc.url, 'poolscope_heartbeats_total', { outcome: 'ok' })).toBe(4);
    // Tokens never reach a log line.
    const logged = JSON.stringify(svc.logs.lines);
    for (const token of [EAST, LLM, ALL]) expect(logged).not.toContain(token);
  });

  it('a refused write is refused before the store, whatever the store would say', async () => {
    const svc = await start({ socket: false, authTokens: TOKENS });
    let heartbeats = 0;
    const inner = svc.store.heartbeat.bind(svc.store);
    svc.store.heartbeat = (...args) => {
      heartbeats += 1;
      return inner(...args);
    };
    expect((await postJson(svc.app, pool('eu-west-1'), bearer(EAST))).status).toBe(403);
    expect(heartbeats).toBe(0);
    expect((await postJson(svc.app, pool('us-east-1'), bearer(EAST))).status).toBe(200);
    expect(heartbeats).toBe(1);
  });

  it('logs the first write of each key by each token, with the scope that allowed it, and the first refusal', async () => {
    const svc = await start({ socket: false, authTokens: TOKENS });
    const audit = () => svc.logs.lines.filter((l) => l.msg === 'first write of this key by this credential');
    for (let i = 0; i < 3; i++) expect((await postJson(svc.app, pool('us-east-2', 'llm'), bearer(EAST))).status).toBe(200);
    expect((await postJson(svc.app, pool('us-east-1', 'llm'), bearer(EAST))).status).toBe(200);
    expect((await postJson(svc.app, pool('us-east-1', 'llm'), bearer(ALL))).status).toBe(200);
    expect((await postJson(svc.app, pool('us-east-1', 'llm'), bearer(EAST))).status).toBe(200);
    expect(audit()).toEqual([
      expect.objectContaining({ level: 30, credential: 'the bearer token of --auth-token-file line 1', pool: 'us-east-2/llm/p1', scope: 'us-east-2/llm' }),
      expect.objectContaining({ level: 30, credential: 'the bearer token of --auth-token-file line 1', pool: 'us-east-1/llm/p1', scope: 'us-east-1' }),
      expect.objectContaining({ level: 30, credential: 'the bearer token of --auth-token-file line 3', pool: 'us-east-1/llm/p1', scope: null }),
    ]);
    for (let i = 0; i < 2; i++) expect((await postJson(svc.app, pool('eu-west-1'), bearer(EAST))).status).toBe(403);
    const refused = svc.logs.lines.filter((l) => l.msg === 'write refused: outside the scopes of its credential');
    expect(refused).toEqual([
      expect.objectContaining({ level: 40, credential: 'the bearer token of --auth-token-file line 1', pool: 'eu-west-1/llm/p1', scopes: ['us-east-1', 'us-east-2/llm'] }),
    ]);
  });

  it('no heartbeat with a token or certificate scopes to check takes the Node-level fast path; without either it does', async () => {
    expect(nodeFastPathOf((await start({ socket: false })).app)).toBeDefined();
    expect(nodeFastPathOf((await start({ socket: false, authTokens: [ALL] })).app)).toBeUndefined();
    expect(nodeFastPathOf((await start({ socket: false, authTokens: TOKENS })).app)).toBeUndefined();
    expect(nodeFastPathOf((await start({ socket: false, clientScopes: ['relay c1'] })).app)).toBeUndefined();
  });

  it('an unauthenticated write is still 401, not 403: tokens first, scopes once the pool is known', async () => {
    const svc = await start({ socket: false, authTokens: TOKENS });
    expect((await postJson(svc.app, pool('us-east-1'))).status).toBe(401);
    expect((await postJson(svc.app, pool('us-east-1'), bearer('no-such-token'))).status).toBe(401);
    // A body the schema refuses is 400 for a scoped token too: the pool must be read to check its scope.
    const invalid = await postJson(svc.app, { ...pool('eu-west-1'), name: 'Not_A_Name' }, bearer(EAST));
    expect(invalid.status).toBe(400);
  });
});

describe('scopes reloaded with the token file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poolscope-scopes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a narrowed scope refuses within 2 s; a bad scope keeps the last good ones with a warning', async () => {
    const path = join(dir, 'write-tokens');
    writeFileSync(path, `${EAST} us-east-1 us-east-2\n`);
    const svc = await start({ socket: false, authTokenFile: path });
    expect((await postJson(svc.app, pool('us-east-2'), bearer(EAST))).status).toBe(200);

    writeFileSync(path, `${EAST} us-east-1\n`);
    const changed = Date.now();
    await eventually(async () => expect((await postJson(svc.app, pool('us-east-2'), bearer(EAST))).status).toBe(403), { timeoutMs: 2000, intervalMs: 20 });
    expect(Date.now() - changed).toBeLessThan(2000);
    expect((await postJson(svc.app, pool('us-east-1'), bearer(EAST))).status).toBe(200);

    writeFileSync(path, `${EAST} us-east-1/llm/p1\n`);
    await eventually(() => expect(svc.logs.warnings().map((l) => l.msg)).toContain('token file not used: keeping the last good tokens'), { timeoutMs: 2000 });
    const warning = svc.logs.warnings().find((l) => l.msg === 'token file not used: keeping the last good tokens');
    expect(warning).toMatchObject({ flag: 'auth-token-file', reason: expect.stringMatching(/^line 1: "us-east-1\/llm\/p1": a scope names at most/) });
    expect(JSON.stringify(warning)).not.toContain(EAST);
    expect((await postJson(svc.app, pool('us-east-1'), bearer(EAST))).status).toBe(200);
    expect((await postJson(svc.app, pool('us-east-2'), bearer(EAST))).status).toBe(403);
  });
});
