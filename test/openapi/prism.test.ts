// The document checked by a validator nobody here wrote (docs/contract.md §11): Stoplight Prism as a
// validating proxy (`prism proxy <document> <replica> --errors`) in front of a replica with write and read
// tokens. Every operation of the document goes through it, with tokens and without, and each reply must
// match the document (Prism answers 500 with the violations instead, and names warnings in
// `sl-violations`). Requests the service refuses must be refused by the document too (Prism answers 422
// without passing them on). A copy of the document that says one thing wrong shows the check can fail.
// What Prism cannot do, and is checked otherwise: proxy an event stream (test/http/sse-clients.test.ts),
// and read a HEAD reply of a JSON route (it parses the empty body as JSON and fails; HEAD is checked
// against the document below, directly).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT } from '../support/process.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const WRITE = 'write.token';
const READ = 'read.token';
const POOL = registration();
const ROUTER = { id: 'gr-1', url: 'http://10.0.1.5:9100', region: 'us-east-1' };
const KEY = `${POOL.cluster_id}/${POOL.namespace}/${POOL.name}`;

type Doc = {
  paths: Record<string, Record<string, { security: Record<string, string[]>[]; responses: Record<string, unknown> }>>;
};

interface Prism {
  url: string;
  output: () => string;
  stop(): void;
}

async function startPrism(document: unknown, upstream: string): Promise<Prism> {
  const file = join(mkdtempSync(join(tmpdir(), 'poolscope-prism-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  const child: ChildProcess = spawn(join(REPO_ROOT, 'node_modules/.bin/prism'), ['proxy', file, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(() => output.includes('Prism is listening'), { timeoutMs: 60_000, message: `Prism started:\n${output}` });
  return { url: `http://127.0.0.1:${port}`, output: () => output, stop: () => child.kill() };
}

/** The path of an operation with its parameters filled in for the registered pool. */
function concrete(path: string): string {
  return path
    .replace('{cluster_id}', POOL.cluster_id)
    .replace('{namespace}', POOL.namespace)
    .replace('{name}', POOL.name)
    .replace('{key}', encodeURIComponent(KEY));
}

describe('Prism, a validating proxy, in front of a replica', () => {
  let svc: TestService;
  let doc: Doc;
  let prism: Prism;
  let broken: Prism;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 60_000, authTokens: [WRITE], readTokens: [READ] });
    expect((await fetch(`${svc.url}/pools`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${WRITE}` }, body: JSON.stringify(POOL) })).status).toBe(200);
    doc = (await (await fetch(`${svc.url}/openapi.json`, { headers: { authorization: `Bearer ${READ}` } })).json()) as Doc;
    // The same document, but saying `complete` is a string: every GET /pools reply breaks it.
    const wrong = JSON.parse(JSON.stringify(doc)) as { components: { schemas: { PoolList: { properties: { complete: unknown } } } } };
    wrong.components.schemas.PoolList.properties.complete = { type: 'string' };
    [prism, broken] = await Promise.all([startPrism(doc, svc.url), startPrism(wrong, svc.url)]);
  }, 120_000);
  afterAll(async () => {
    prism?.stop();
    broken?.stop();
    await svc?.stop();
  });

  /** The same request to the replica and through Prism: the same status, and no violation. */
  async function expectValid(method: string, path: string, init: RequestInit = {}): Promise<number> {
    const direct = await fetch(`${svc.url}${path}`, { ...init, method });
    await direct.arrayBuffer();
    const proxied = await fetch(`${prism.url}${path}`, { ...init, method });
    const body = await proxied.text();
    expect(proxied.headers.get('sl-violations'), `${method} ${path}: ${body.slice(0, 400)}`).toBeNull();
    expect(proxied.status, `${method} ${path}: ${body.slice(0, 400)}`).toBe(direct.status);
    return proxied.status;
  }

  it('every operation of the document, with a token, without one, and with the wrong one: each reply as the document says', async () => {
    const statuses = new Map<string, Set<number>>();
    const tokens: Record<string, string>[] = [{}, { authorization: `Bearer ${READ}` }, { authorization: `Bearer ${WRITE}` }, { authorization: 'Basic Zm9v' }];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) {
        // Prism cannot proxy an event stream, nor read a HEAD reply of a JSON route (see the header).
        if (method === 'head' || (method === 'get' && path.endsWith('/watch'))) continue;
        // A probe needs no token, and Prism reads the document's `{}` (no security) as "no Authorization
        // header" (OpenAPI: none needed): probes are called as a prober calls them, without one.
        const open = operations[method]!.security.every((set) => !('readToken' in set) && !('writeToken' in set));
        for (const auth of open ? [{}] : tokens) {
          const init: RequestInit =
            method === 'post'
              ? { headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(path === '/routers' ? ROUTER : POOL) }
              : { headers: auth };
          const status = await expectValid(method.toUpperCase(), concrete(path), init);
          statuses.set(`${method} ${path}`, new Set([...(statuses.get(`${method} ${path}`) ?? []), status]));
        }
      }
    }
    // What the replica answered was more than the happy path: the refusals were checked too.
    expect(statuses.get('post /pools')).toEqual(new Set([401, 403, 200]));
    expect(statuses.get('post /routers')).toEqual(new Set([401, 403, 200]));
    expect(statuses.get('get /routers')).toEqual(new Set([401, 200]));
    expect(statuses.get('get /pools')).toEqual(new Set([401, 200]));
    expect(statuses.get('get /livez')).toEqual(new Set([200]));
  });

  it('the conditional and compressed GET /pools, a filter, a 304, and the 404s', async () => {
    const auth = { authorization: `Bearer ${READ}` };
    const etag = (await fetch(`${svc.url}/pools`, { headers: auth })).headers.get('etag')!;
    expect(await expectValid('GET', '/pools', { headers: { ...auth, 'if-none-match': etag } })).toBe(304);
    expect(await expectValid('GET', '/pools?model=nothing', { headers: { ...auth, 'accept-encoding': 'gzip' } })).toBe(200);
    expect(await expectValid('GET', '/debug/pools/a/b/c', { headers: auth })).toBe(404);
    expect(await expectValid('GET', `/debug/pools/${encodeURIComponent('a/b/c')}`, { headers: auth })).toBe(404);
  });

  it('requests the replica refuses, the document refuses too (names, URLs, numbers, keys, counts, lengths)', async () => {
    const refused: [string, string, string?][] = [
      ['a content type that is not JSON', JSON.stringify(POOL), 'text/plain'],
      ['an upper-case name', JSON.stringify({ ...POOL, name: 'Llama' })],
      ['a name with a slash', JSON.stringify({ ...POOL, name: 'a/b' })],
      ['a name with surrounding whitespace', JSON.stringify({ ...POOL, name: ' x' })],
      ['a namespace of 254 characters', JSON.stringify({ ...POOL, namespace: `${'a'.repeat(63)}.`.repeat(4).slice(0, 254) })],
      ['an ftp:// frontend', JSON.stringify({ ...POOL, frontends: ['ftp://10.0.0.7'] })],
      ['a relay with no host', JSON.stringify({ ...POOL, relay: 'http://' })],
      ['a relay with surrounding whitespace', JSON.stringify({ ...POOL, relay: ' http://10.0.0.9:9000' })],
      ['a frontend that is no URL', JSON.stringify({ ...POOL, frontends: ['10.0.0.7:8000'] })],
      ['a capacity of 1e400', JSON.stringify(POOL).replace('"value":8', '"value":1e400')],
      ['a capacity of -1e400', JSON.stringify(POOL).replace('"value":8', '"value":-1e400')],
      ['a capacity that is a string', JSON.stringify({ ...POOL, capacity: [{ name: 'gpus', value: '8' }] })],
      ['an empty model', JSON.stringify({ ...POOL, model: '' })],
      ['a model of 513 characters', JSON.stringify({ ...POOL, model: 'm'.repeat(513) })],
      ['65 capabilities', JSON.stringify({ ...POOL, capabilities: Array.from({ length: 65 }, (_, i) => `c${i}`) })],
      ['an empty capability', JSON.stringify({ ...POOL, capabilities: [''] })],
      ['an unknown key', JSON.stringify({ ...POOL, colour: 'blue' })],
      ['an unknown key in location', JSON.stringify({ ...POOL, location: { floor: 3 } })],
      ['no model', JSON.stringify({ ...POOL, model: undefined })],
      ['an array', '[]'],
    ];
    for (const [what, body, contentType = 'application/json'] of refused) {
      const init = { method: 'POST', headers: { authorization: `Bearer ${WRITE}`, 'content-type': contentType }, body };
      const direct = await fetch(`${svc.url}/pools`, init);
      expect(direct.status, `the replica, ${what}: ${await direct.text()}`).toBe(contentType === 'application/json' ? 400 : 415);
      const proxied = await fetch(`${prism.url}/pools`, init);
      const problem = (await proxied.json()) as { type?: string; validation?: { location?: string[] }[] };
      expect(proxied.status, `the document, ${what}`).toBe(422);
      expect(problem.type).toMatch(/UNPROCESSABLE_ENTITY/);
      if (contentType === 'application/json') expect(problem.validation?.[0]?.location?.[0]).toBe('body');
    }
    expect((await svc.store.snapshot()).records).toHaveLength(1);
  });

  it('the check can fail: a reply that breaks its document is caught', async () => {
    const response = await fetch(`${broken.url}/pools`, { headers: { authorization: `Bearer ${READ}` } });
    const problem = (await response.json()) as { type?: string; validation?: { location: string[] }[] };
    expect(response.status).toBe(500);
    expect(problem.type).toMatch(/VIOLATIONS/);
    expect(problem.validation?.map((v) => v.location.join('.'))).toContain('response.body.complete');
  });

  it('HEAD, which Prism cannot read on JSON routes: each answers a status the document lists for it, no body', async () => {
    const auth = { authorization: `Bearer ${READ}` };
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!operations.head) continue;
      const response = await fetch(`${svc.url}${concrete(path)}`, { method: 'HEAD', headers: auth });
      expect(Object.keys(operations.head.responses), `HEAD ${path}`).toContain(String(response.status));
      expect(await response.text()).toBe('');
    }
  });
});
