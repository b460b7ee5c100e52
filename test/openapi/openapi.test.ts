// GET /openapi.json: a valid OpenAPI 3.1 document that lists every route of docs/contract.md §5 and every
// route the app serves (so a route added without its description fails here), whose $refs resolve, and
// whose schemas (the zod schemas it is generated from) accept what the routes really answer.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heartbeatReplySchema, poolListSchema } from '../../src/contract/index.js';
import { debugPoolDetailSchema, debugPoolListSchema, debugPoolSchema, machineGraphSchema } from '../../src/openapi/debug-schemas.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

/** docs/contract.md §5, route by route. */
const CONTRACT_ROUTES = [
  'POST /pools',
  'GET /pools',
  'GET /pools/watch',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'GET /debug/pools',
  'GET /debug/pools/{cluster_id}/{namespace}/{name}',
  'GET /debug',
];

/** Served, but not part of the API: the page's own files, and /debug with a trailing slash. */
const NOT_DESCRIBED = new Set(['GET /debug/', 'GET /debug/assets/{file}']);

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: any }>>; components: { schemas: Record<string, unknown> } };

describe('GET /openapi.json', () => {
  let svc: TestService;
  let doc: Doc;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 2000, socket: false });
    const response = await svc.app.request('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await response.json()) as Doc;
  });
  afterAll(() => svc?.stop());

  const described = () =>
    new Set(Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)));

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('lists every route of docs/contract.md §5', () => {
    const routes = described();
    for (const route of CONTRACT_ROUTES) expect(routes, route).toContain(route);
  });

  it('describes every route the app serves, and serves every route it describes; HEAD beside every GET, as Hono serves it', async () => {
    const served = new Set(
      svc.app.routes
        .filter((r) => r.method !== 'ALL')
        .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`)
        .filter((r) => !NOT_DESCRIBED.has(r)),
    );
    const all = described();
    expect(new Set([...all].filter((r) => !r.startsWith('HEAD ')))).toEqual(served);
    const gets = [...all].filter((r) => r.startsWith('GET '));
    expect(new Set([...all].filter((r) => r.startsWith('HEAD ')))).toEqual(new Set(gets.map((r) => r.replace(/^GET/, 'HEAD'))));
    for (const path of ['/pools', '/pools/watch', '/livez', '/debug/pools']) {
      const head = await svc.app.request(path, { method: 'HEAD' });
      expect(head.status, `HEAD ${path}`).toBe(200);
      expect(await head.text()).toBe('');
    }
  });

  it('resolves every $ref', () => {
    const refs: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === '$ref' && typeof v === 'string') refs.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas, ref).toHaveProperty(ref.slice('#/components/schemas/'.length));
    }
  });

  it('carries the contract field rules (from the zod schemas)', () => {
    const input = doc.components.schemas.Registration as { required: string[]; additionalProperties: boolean; properties: Record<string, { maxLength?: number; maxItems?: number }> };
    expect(input.required.sort()).toEqual(['cluster_id', 'model', 'name', 'namespace']);
    expect(input.additionalProperties).toBe(false);
    expect(input.properties.cluster_id!.maxLength).toBe(253);
    expect(input.properties.model!.maxLength).toBe(512);
    expect(input.properties.capabilities!.maxItems).toBe(64);
  });

  it('carries every rule as JSON Schema: the patterns, the URL format, finite numbers; no default that makes a request field required', () => {
    const input = doc.components.schemas.Registration as { properties: Record<string, any> };
    for (const field of ['cluster_id', 'namespace', 'name']) expect(new RegExp(input.properties[field].pattern).test('Llama')).toBe(false);
    expect(input.properties.frontends.items).toMatchObject({ format: 'uri', pattern: expect.any(String) });
    expect(new RegExp(input.properties.relay.pattern).test('ftp://a')).toBe(false);
    expect(input.properties.capacity.items.properties.value).toMatchObject({ minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE });
    expect(JSON.stringify(input)).not.toContain('"default"');
    expect(input.properties.capabilities.description).toMatch(/Default: \[\]/);
  });

  it('documents the security of every operation, its statuses, and the events of each stream', () => {
    const schemes = (doc as unknown as { components: { securitySchemes: Record<string, { type: string }> } }).components.securitySchemes;
    expect(Object.fromEntries(Object.entries(schemes).map(([k, v]) => [k, v.type]))).toEqual({ writeToken: 'http', readToken: 'http', mutualTLS: 'mutualTLS' });
    type Op = { security: Record<string, string[]>[]; responses: Record<string, any>; requestBody?: any };
    const op = (path: string, method: string) => (doc.paths[path] as unknown as Record<string, Op>)[method]!;
    expect(op('/pools', 'post').security).toContainEqual({ writeToken: [] });
    expect(op('/pools', 'post').security).not.toContainEqual({ readToken: [] });
    expect(op('/pools', 'get').security).toContainEqual({ readToken: [] });
    expect(op('/livez', 'get').security).toEqual([{}, { mutualTLS: [] }]);
    expect(Object.keys(op('/pools', 'post').responses)).toEqual(['200', '400', '401', '403', '408', '413', '414', '415', '417', '431', '500', '503']);
    expect(op('/pools/watch', 'get').responses['503'].headers['Retry-After']).toBeDefined();
    expect(op('/pools', 'get').responses['401'].headers['WWW-Authenticate']).toBeDefined();
    expect(Object.keys(op('/pools', 'post').requestBody.content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    const events = op('/pools/watch', 'get').responses['200'].content['text/event-stream'].schema.anyOf.map((e: any) => e.properties.event.const);
    expect(events).toEqual(['resync', 'upsert', 'delete', 'overloaded', 'closing']);
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods as unknown as Record<string, Op>)) {
        // Who may call it: a probe with nothing or a client certificate, every other route with a token too.
        expect(operation.security, `${method} ${path}`).toContainEqual({ mutualTLS: [] });
        for (const status of ['400', '408', '414', '417', '431', '500']) expect(operation.responses, `${method} ${path}`).toHaveProperty(status);
      }
    }
  });

  it('gives every operation a summary and its own operationId, and every parameter, request body, response and response header a description', () => {
    // What a generated client and a rendered reference show a reader: none of it may be left blank.
    const blank: string[] = [];
    // An error answer's description ends with its codes, `(code: a or b)`: the words before them count.
    const text = (where: string, value: unknown) => {
      if (typeof value !== 'string' || value.replace(/\(code: [a-z_ ]+\)$/, '').trim() === '') blank.push(where);
    };
    const operationIds = new Map<string, string>();
    type Described = { description?: unknown };
    type Op = Described & {
      summary?: unknown;
      operationId: string;
      parameters?: (Described & { name: string; in: string })[];
      requestBody?: Described;
      responses: Record<string, Described & { headers?: Record<string, Described> }>;
    };
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods as unknown as Record<string, Op>)) {
        const at = `${method.toUpperCase()} ${path}`;
        text(`${at} summary`, operation.summary);
        text(`${at} operationId`, operation.operationId);
        expect(operationIds.get(operation.operationId), `${at}: operationId ${operation.operationId}`).toBeUndefined();
        operationIds.set(operation.operationId, at);
        if ('description' in operation) text(`${at} description`, operation.description);
        for (const parameter of operation.parameters ?? []) text(`${at} ${parameter.in} ${parameter.name}`, parameter.description);
        if (operation.requestBody) text(`${at} request body`, operation.requestBody.description);
        for (const [status, response] of Object.entries(operation.responses)) {
          text(`${at} ${status}`, response.description);
          for (const [name, header] of Object.entries(response.headers ?? {})) text(`${at} ${status} header ${name}`, header.description);
        }
      }
    }
    expect(blank).toEqual([]);
    expect(operationIds.size).toBeGreaterThanOrEqual(CONTRACT_ROUTES.length);
  });

  it('has schemas that accept what the routes answer (no field missing, none extra)', async () => {
    const key = 'us-east-1/llm/llama-70b';
    const reply = await (await postJson(svc.app, registration())).json();
    expect(heartbeatReplySchema.strict().parse(reply)).toEqual(reply);
    await waitFor(async () => (await (await svc.app.request('/pools')).json()).pools.length === 1);
    const get = async (path: string) => (await svc.app.request(path)).json();
    const exact = (schema: { parse(v: unknown): unknown }, body: unknown) => expect(schema.parse(body)).toEqual(body);
    exact(poolListSchema, await get('/pools'));
    exact(debugPoolListSchema, await get('/debug/pools'));
    exact(debugPoolSchema, await get(`/debug/pools/${key}`));
    exact(debugPoolDetailSchema, await get(`/debug/pools/${encodeURIComponent(key)}`));
    exact(machineGraphSchema, await get('/debug/machine'));
  });
});
