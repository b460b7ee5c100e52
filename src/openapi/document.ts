// The OpenAPI 3.1 description of the service (GET /openapi.json), generated from the same zod schemas
// the routes validate and answer with (src/contract, ./debug-schemas.ts) by zod's own JSON Schema
// output, so a field rule changed in the contract changes the description with it.
import { z } from 'zod';
import {
  errorBodySchema,
  heartbeatReplySchema,
  listedPoolSchema,
  poolIdSchema,
  poolListSchema,
  registrationSchema,
  watchEventSchemas,
} from '../contract/index.js';
import {
  debugPoolDetailSchema,
  debugPoolListSchema,
  debugPoolSchema,
  debugPoolSummarySchema,
  machineGraphSchema,
} from './debug-schemas.js';

type JsonObject = Record<string, unknown>;

export interface OpenApiOptions {
  version: string;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject, description: string) => ({ description, content: { 'application/json': { schema } } });
const text = (contentType: string, description: string) => ({
  description,
  content: { [contentType]: { schema: { type: 'string' } } },
});
const error = (description: string) => json(ref('Error'), description);

/** Components: output shapes (what the service answers) and the registration as a relay may send it. */
function componentSchemas(): Record<string, JsonObject> {
  const outputs = z.registry<{ id: string; description?: string }>();
  outputs.add(errorBodySchema, { id: 'Error', description: '{"error": {"code", "message", "field"?}}' });
  outputs.add(heartbeatReplySchema, { id: 'HeartbeatReply' });
  outputs.add(listedPoolSchema, { id: 'ListedPool', description: 'A pool as routers see it: only live and frontendless pools are listed.' });
  outputs.add(poolListSchema, { id: 'PoolList' });
  outputs.add(poolIdSchema, { id: 'PoolId' });
  outputs.add(watchEventSchemas.upsert, { id: 'WatchUpsert' });
  outputs.add(watchEventSchemas.delete, { id: 'WatchDelete' });
  outputs.add(registrationSchema, { id: 'Registration', description: 'A registration as stored (defaults filled in).' });
  outputs.add(debugPoolSchema, { id: 'DebugPool' });
  outputs.add(debugPoolListSchema, { id: 'DebugPoolList' });
  outputs.add(debugPoolDetailSchema, { id: 'DebugPoolDetail' });
  outputs.add(debugPoolSummarySchema, { id: 'DebugPoolSummary' });
  outputs.add(machineGraphSchema, { id: 'MachineGraph', description: 'The pool state chart, read from the machine definition.' });
  const inputs = z.registry<{ id: string; description?: string }>();
  inputs.add(registrationSchema, { id: 'RegistrationInput', description: 'POST /pools body. Unknown keys are refused, at any depth.' });
  const uri = (id: string) => `#/components/schemas/${id}`;
  const out = z.toJSONSchema(outputs, { io: 'output', uri }).schemas as Record<string, JsonObject>;
  const inp = z.toJSONSchema(inputs, { io: 'input', uri }).schemas as Record<string, JsonObject>;
  const all = { ...out, ...inp };
  // Inside an OpenAPI document the dialect is the document's; a per-schema $schema/$id adds nothing.
  for (const schema of Object.values(all)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return all;
}

const sse = (description: string) => text('text/event-stream', description);

export function openApiDocument(options: OpenApiOptions): JsonObject {
  const poolPath = ['cluster_id', 'namespace', 'name'].map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'poolscope',
      version: options.version,
      description:
        'Global pool discovery for model-serving pools. PoolRelays heartbeat registrations; routers read the listed pools. See docs/contract.md in the repository.',
    },
    components: {
      schemas: componentSchemas(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'POST /pools with --auth-token-file; every other route but /healthz and /readyz with --read-token-file (a write token reads too); else none' } },
    },
    paths: {
      '/pools': {
        post: {
          operationId: 'heartbeat',
          summary: "A PoolRelay's heartbeat: renew (or create) the pool's lease",
          security: [{}, { bearer: [] }],
          requestBody: { required: true, content: { 'application/json': { schema: ref('RegistrationInput') } } },
          responses: {
            '200': json(ref('HeartbeatReply'), 'the lease was renewed'),
            '400': error('malformed JSON (invalid_json) or an invalid or unknown field (field: the dotted path)'),
            '401': error('no valid bearer token, when tokens are configured'),
            '413': error('body larger than 64 KiB'),
            '415': error('content type other than JSON'),
            '503': error('the store cannot be reached within its command timeout'),
          },
        },
        get: {
          operationId: 'listPools',
          summary: 'The listed pools (live and frontendless)',
          parameters: [
            { name: 'model', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag of the list held (a list of tags, or *): 304 while it is current' },
            { name: 'Accept-Encoding', in: 'header', required: false, schema: { type: 'string' }, description: 'gzip and br are offered (q-values honoured, q=0 refuses); identity otherwise' },
          ],
          responses: {
            '200': {
              ...json(ref('PoolList'), 'complete: false means pools may be missing (keep the ones you know)'),
              headers: {
                ETag: { description: 'Strong; changes with the revision, the filter, the completeness and the content coding', schema: { type: 'string' } },
                'Content-Encoding': { description: 'gzip or br when the request accepts one', schema: { enum: ['gzip', 'br'] } },
                Vary: { schema: { const: 'Accept-Encoding' } },
              },
            },
            '304': {
              description: 'If-None-Match holds the current ETag: the list held is still the list; no body',
              headers: { ETag: { description: 'The current tag', schema: { type: 'string' } } },
            },
          },
        },
      },
      '/pools/watch': {
        get: {
          operationId: 'watchPools',
          summary: 'The listed pools as Server-Sent Events',
          description:
            'event: resync (data: PoolList), then upsert (WatchUpsert) and delete (WatchDelete) per change, and a new resync when completeness changes, a region’s entry turns complete, incomplete or dropped, or a source relists; id: the revision; a comment line at least every 15 s. With a Last-Event-ID within the replica’s replay window (at least its last 10,000 changes), the stream resumes: a comment line, then the events after that revision, no resync.',
          parameters: [{ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'The revision of the last event received from this replica' }],
          responses: {
            '200': sse('resync, upsert, delete'),
            '503': error('--max-watchers streams are open (too_many_watchers); Retry-After says when to try again'),
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'The process serves and can read its store',
          responses: {
            '200': json({ type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] }, 'serving'),
            '503': error('the store cannot be read (store_unavailable), or a source’s loop failed and is restarting (source_down)'),
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary: 'Every source has been read in full once',
          responses: {
            '200': json({ type: 'object', properties: { status: { const: 'ready' } }, required: ['status'] }, 'ready'),
            '503': error('a source has not been read in full yet (not_ready)'),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus metrics (text exposition format)',
          responses: { '200': text('text/plain; version=0.0.4; charset=utf-8', 'poolscope_* and process metrics') },
        },
      },
      '/debug': {
        get: {
          operationId: 'debugPage',
          summary: "A page that draws each pool's state machine, its current state and its history, live",
          responses: { '200': text('text/html', 'the page (self-hosted: it loads nothing from any other origin)') },
        },
      },
      '/debug/machine': {
        get: {
          operationId: 'debugMachine',
          summary: 'The pool state chart as data, read from the machine definition',
          responses: { '200': json(ref('MachineGraph'), 'states and transitions') },
        },
      },
      '/debug/pools': {
        get: {
          operationId: 'debugPools',
          summary: "Every pool's state, context and recent transitions, unregistered ones too",
          responses: { '200': json(ref('DebugPoolList'), 'every pool this replica holds') },
        },
      },
      '/debug/pools/watch': {
        get: {
          operationId: 'debugWatch',
          summary: 'What /debug follows, as Server-Sent Events',
          description:
            'event: snapshot (completeness, pools: DebugPoolSummary[], selected: DebugPoolDetail | null, regions: RegionStatus[] | null, overview), then pools ({upserted, removed}), pool ({pool: DebugPoolDetail | null}) for the selected pool, completeness ({complete, reasons}), regions (each region\'s status, with regions configured) and overview (pool counts by region × state and by model) when they change.',
          parameters: [{ name: 'pool', in: 'query', required: false, schema: { type: 'string' }, description: 'the pool whose detail is sent' }],
          responses: { '200': sse('snapshot, pools, pool, completeness, regions, overview') },
        },
      },
      '/debug/pools/{key}': {
        get: {
          operationId: 'debugPoolByKey',
          summary: 'One pool in full, with the causes of its transitions',
          parameters: [
            { name: 'key', in: 'path', required: true, schema: { type: 'string' }, description: 'cluster_id/namespace/name, URL-encoded' },
          ],
          responses: { '200': json(ref('DebugPoolDetail'), 'the pool'), '404': error('no such pool on this replica') },
        },
      },
      '/debug/pools/{cluster_id}/{namespace}/{name}': {
        get: {
          operationId: 'debugPool',
          summary: 'One pool',
          parameters: poolPath,
          responses: { '200': json(ref('DebugPool'), 'the pool'), '404': error('no such pool on this replica') },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openApi',
          summary: 'This description',
          responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1') },
        },
      },
    },
  };
}
