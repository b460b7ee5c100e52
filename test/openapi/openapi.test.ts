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

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { schemas: Record<string, unknown> } };

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

  it('describes every route the app serves, and serves every route it describes', () => {
    const served = new Set(
      svc.app.routes
        .filter((r) => r.method !== 'ALL')
        .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`)
        .filter((r) => !NOT_DESCRIBED.has(r)),
    );
    expect(described()).toEqual(served);
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
    const input = doc.components.schemas.RegistrationInput as { required: string[]; additionalProperties: boolean; properties: Record<string, { maxLength?: number; maxItems?: number }> };
    expect(input.required.sort()).toEqual(['cluster_id', 'model', 'name', 'namespace']);
    expect(input.additionalProperties).toBe(false);
    expect(input.properties.cluster_id!.maxLength).toBe(253);
    expect(input.properties.model!.maxLength).toBe(512);
    expect(input.properties.capabilities!.maxItems).toBe(64);
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
