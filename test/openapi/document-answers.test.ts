// What the routes answer, held against what GET /openapi.json says of them (docs/contract.md §11). Each
// exchange is a real request to the service in process; for each, the document must list the answer's
// status under that operation, name the error code it carried, hold a schema that accepts its JSON body
// (Ajv, against the document itself: the schemas a generated client or a validating gateway reads), name
// its media type and the headers a client reads, and declare every parameter the request sent. The
// document is built from the operations declared beside each route (src/http/*.ts): a declaration that
// drifts from its route fails here.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, MAX_BODY_BYTES } from '../../src/contract/index.js';
import { StoreUnavailableError } from '../../src/store/types.js';
import { probes } from '../support/probes.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

type Parameter = { in: string; name: string };
type DocResponse = { description: string; headers?: Record<string, unknown>; content?: Record<string, unknown> };
type Operation = { parameters?: Parameter[]; responses: Record<string, DocResponse> };
type Doc = { paths: Record<string, Record<string, Operation>> };

const WRITE = 'write-token-0123456789';
const READ = 'read-token-0123456789';
const router = { id: 'router-a', url: 'http://10.0.0.9:8080', region: 'us-east-1' };

/** Headers a client reads from an answer: each one sent must be in the document. */
const READ_HEADERS = ['etag', 'vary', 'cache-control', 'content-encoding', 'retry-after', 'www-authenticate'];
/** Request headers the document says elsewhere: the security, the request body's media type, framing. */
const NOT_PARAMETERS = new Set(['authorization', 'content-type', 'content-encoding', 'content-length']);

/** `(code: a or b)`, as the document closes the description of an error answer. */
function codesIn(description: string): string[] {
  const match = /\(code: ([a-z_]+(?: or [a-z_]+)*)\)$/.exec(description);
  return match === null ? [] : match[1]!.split(' or ');
}

const pointer = (...parts: string[]) => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

describe('the document says what each route answers', () => {
  let svc: TestService;
  let doc: Doc;
  let ajv: Ajv2020;
  const open: Response[] = [];

  beforeAll(async () => {
    svc = await startService({ leaseMs: 2000, socket: false, maxWatchers: 1, authTokens: [WRITE], readTokens: [READ], keepAliveMs: 60_000 });
    doc = (await (await svc.app.request('/openapi.json', { headers: { authorization: `Bearer ${READ}` } })).json()) as Doc;
    // Formats (uri) are the zod schemas' own rules; the shape is what is checked here.
    ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(doc, 'openapi.json');
    // A pool and a router listed before any test, so each test reads non-empty lists on its own.
    for (const [path, body] of [
      ['/pools', registration()],
      ['/routers', router],
    ] as const) {
      const init = { method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${WRITE}`, 'content-type': 'application/json' } };
      expect((await svc.app.request(path, init)).status).toBe(200);
    }
    await waitFor(async () => (await (await svc.app.request('/pools', { headers: { authorization: `Bearer ${READ}` } })).json()).pools.length === 1);
  });
  afterAll(async () => {
    for (const response of open) await response.body?.cancel();
    await svc?.stop();
  });

  /**
   * `method template` answered `url` with `init` on `app`: held against the document. Returns the answer
   * (its body read, unless it is a stream, which is left open until the end).
   */
  async function exchange(operation: string, url: string, init: RequestInit & { headers?: Record<string, string> } = {}, app: Hono = svc.app) {
    const [method, template] = operation.split(' ') as [string, string];
    const headers = { authorization: `Bearer ${method === 'POST' ? WRITE : READ}`, ...init.headers };
    const response = await app.request(url, { ...init, method, headers });
    const at = `${operation} ${response.status}`;
    const described = doc.paths[template]?.[method.toLowerCase()];
    expect(described, operation).toBeDefined();
    const declared = new Set((described!.parameters ?? []).map((p) => `${p.in} ${p.name.toLowerCase()}`));
    for (const name of new URL(url, 'http://replica').searchParams.keys()) expect(declared, at).toContain(`query ${name}`);
    for (const name of Object.keys(headers).map((n) => n.toLowerCase())) if (!NOT_PARAMETERS.has(name)) expect(declared, at).toContain(`header ${name}`);
    for (const name of template.match(/(?<=\{)[a-z_]+(?=\})/g) ?? []) expect(declared, at).toContain(`path ${name}`);

    const answer = described!.responses[String(response.status)];
    expect(answer, at).toBeDefined();
    const documentedHeaders = Object.keys(answer!.headers ?? {}).map((n) => n.toLowerCase());
    for (const name of READ_HEADERS) if (response.headers.has(name)) expect(documentedHeaders, `${at} header ${name}`).toContain(name);
    // Each documented header sent holds to its schema there, as a validating gateway checks it.
    for (const [name, header] of Object.entries(answer!.headers ?? {})) {
      const value = response.headers.get(name);
      if (value === null) continue;
      const ref = (header as { $ref?: string }).$ref;
      const schema = ref === undefined ? pointer('paths', template, method.toLowerCase(), 'responses', String(response.status), 'headers', name) : ref.slice(2);
      ajv.validate({ $ref: `openapi.json#/${schema}/schema` }, value);
      expect(ajv.errors ?? [], `${at} header ${name}: ${value}`).toEqual([]);
    }
    if (response.status === 304) return { response, body: undefined };

    const type = response.headers.get('content-type') ?? '';
    const essence = type.split(';')[0]!.trim();
    const media = Object.keys(answer!.content ?? {});
    expect(media.map((m) => m.split(';')[0]!.trim()), `${at} ${type}`).toContain(essence);
    if (essence === 'text/event-stream') {
      open.push(response);
      return { response, body: undefined };
    }
    if (essence !== 'application/json') return { response, body: await response.text() };
    const bytes = Buffer.from(await response.arrayBuffer());
    const coding = response.headers.get('content-encoding');
    const body = JSON.parse((coding === 'gzip' ? gunzipSync(bytes) : coding === 'br' ? brotliDecompressSync(bytes) : bytes).toString()) as unknown;
    const schema = pointer('paths', template, method.toLowerCase(), 'responses', String(response.status), 'content', media.find((m) => m.startsWith('application/json'))!, 'schema');
    const valid = ajv.validate({ $ref: `openapi.json#/${schema}` }, body);
    expect(ajv.errors ?? [], `${at}: ${JSON.stringify(body).slice(0, 300)}`).toEqual([]);
    expect(valid).toBe(true);
    if (response.status >= 400) expect(codesIn(answer!.description), at).toContain(errorBodySchema.parse(body).error.code);
    return { response, body };
  }

  const post = (operation: string, body: unknown, headers: Record<string, string> = {}) =>
    exchange(operation, operation.split(' ')[1]!, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

  it('POST /pools and POST /routers: the reply, and every refusal a heartbeat can meet', async () => {
    for (const [operation, body] of [
      ['POST /pools', registration()],
      ['POST /routers', router],
    ] as const) {
      expect((await post(operation, body)).response.status).toBe(200);
      expect((await post(operation, '{"not json')).response.status).toBe(400);
      expect((await post(operation, { ...body, surprise: 1 })).response.status).toBe(400);
      expect((await post(operation, { ...body, model: 7, id: 7 })).response.status).toBe(400);
      expect((await post(operation, body, { 'content-type': 'text/plain' })).response.status).toBe(415);
      expect((await post(operation, body, { 'content-encoding': 'gzip' })).response.status).toBe(415);
      expect((await post(operation, body, { 'content-length': String(MAX_BODY_BYTES + 1) })).response.status).toBe(413);
      expect((await post(operation, body, { authorization: 'Bearer nobody' })).response.status).toBe(401);
      expect((await post(operation, body, { authorization: `Bearer ${READ}` })).response.status).toBe(403);
    }
  });

  it('POST /pools and POST /routers when the store cannot be reached', async () => {
    for (const [operation, store, body] of [
      ['POST /pools', svc.store, registration({ name: 'other' })],
      ['POST /routers', svc.routerStore, { ...router, id: 'router-b' }],
    ] as const) {
      const heartbeat = store.heartbeat;
      store.heartbeat = async () => {
        throw new StoreUnavailableError('heartbeat: Command timed out');
      };
      try {
        expect((await post(operation, body)).response.status).toBe(503);
      } finally {
        store.heartbeat = heartbeat;
      }
    }
  });

  it('the lists: filtered, conditional, compressed, refused without a token', async () => {
    for (const [list, filter] of [
      ['/pools', 'model=llama-70b'],
      ['/routers', 'region=us-east-1'],
    ] as const) {
      const { response } = await exchange(`GET ${list}`, `${list}?${filter}`);
      expect(response.status).toBe(200);
      const etag = response.headers.get('etag')!;
      expect((await exchange(`GET ${list}`, `${list}?${filter}`, { headers: { 'If-None-Match': etag } })).response.status).toBe(304);
      for (const coding of ['gzip', 'br']) {
        expect((await exchange(`GET ${list}`, list, { headers: { 'Accept-Encoding': coding } })).response.headers.get('content-encoding')).toBe(coding);
      }
      expect((await exchange(`GET ${list}`, list, { headers: { authorization: 'Bearer nobody' } })).response.status).toBe(401);
    }
  });

  it('the streams: one opened (resumed), the next refused by --max-watchers', async () => {
    for (const stream of ['/pools/watch', '/routers/watch']) {
      const first = await exchange(`GET ${stream}`, stream, { headers: { 'Last-Event-ID': '1', Accept: 'text/event-stream' } });
      expect(first.response.status).toBe(200);
      const refused = await exchange(`GET ${stream}`, stream);
      expect(refused.response.status).toBe(503);
      expect(refused.response.headers.get('retry-after')).not.toBeNull();
    }
    const debug = `/debug/pools/watch?pool=${encodeURIComponent('us-east-1/llm/llama-70b')}`;
    expect((await exchange('GET /debug/pools/watch', debug)).response.status).toBe(200);
    expect((await exchange('GET /debug/pools/watch', '/debug/pools/watch')).response.status).toBe(503);
  });

  it('/debug, /metrics and /openapi.json', async () => {
    const key = ['us-east-1', 'llm', 'llama-70b'];
    expect((await exchange('GET /debug/pools', '/debug/pools')).response.status).toBe(200);
    expect((await exchange('GET /debug/pools/{cluster_id}/{namespace}/{name}', `/debug/pools/${key.join('/')}`)).response.status).toBe(200);
    expect((await exchange('GET /debug/pools/{cluster_id}/{namespace}/{name}', '/debug/pools/a/b/c')).response.status).toBe(404);
    expect((await exchange('GET /debug/pools/{key}', `/debug/pools/${encodeURIComponent(key.join('/'))}`)).response.status).toBe(200);
    expect((await exchange('GET /debug/pools/{key}', `/debug/pools/${encodeURIComponent('a/b/c')}`)).response.status).toBe(404);
    expect((await exchange('GET /debug/machine', '/debug/machine')).response.status).toBe(200);
    expect((await exchange('GET /debug/routers', '/debug/routers')).response.status).toBe(200);
    expect([200, 503]).toContain((await exchange('GET /debug', '/debug')).response.status);
    expect((await exchange('GET /metrics', '/metrics')).response.status).toBe(200);
    expect((await exchange('GET /openapi.json', '/openapi.json')).response.status).toBe(200);
  });

  it('the probes, in each state of the join', async () => {
    expect((await exchange('GET /livez', '/livez')).response.status).toBe(200);
    expect((await exchange('GET /healthz', '/healthz')).response.status).toBe(200);
    expect((await exchange('GET /readyz', '/readyz')).response.status).toBe(200);
    // The same routes over a join in a chosen state.
    const down = probes({ storeReadable: { ok: false, reason: 'store: no answer' } });
    expect((await exchange('GET /healthz', '/healthz', {}, down)).response.status).toBe(503);
    expect((await exchange('GET /healthz', '/healthz', {}, probes({ sourceDown: 'kubernetes: x' }))).response.status).toBe(503);
    expect((await exchange('GET /readyz', '/readyz', {}, probes({ ready: false }))).response.status).toBe(503);
  });
});
