// The OpenAPI 3.1 document of the service (GET /openapi.json, docs/contract.md §11), generated from the
// operations each route module declares beside its handlers (ApiOperation, src/contract/api.ts) with the
// very zod schemas the handlers validate and answer with. zod-openapi writes the document and zod's own
// toJSONSchema every schema in it, so a rule changed in src/contract changes the document with it. Here
// only what every route shares is added: the statuses Node's HTTP parser and the server answer on any
// route (400, 408, 414, 417, 431, 500), the security a route's access needs (401, 403), and HEAD beside
// every GET (Hono serves both). Nothing in the document is written by hand.
import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import {
  errorBodySchema,
  heartbeatReplySchema,
  listedPoolSchema,
  poolIdSchema,
  poolListSchema,
  registrationSchema,
  regionStatusSchema,
  type Access,
  type ApiOperation,
  type ApiResponse,
  type ErrorCode,
  watchEventSchemas,
} from '../contract/index.js';
import {
  debugPoolDetailSchema,
  debugPoolListSchema,
  debugPoolSchema,
  debugPoolSummarySchema,
  debugRegionSchema,
  fleetOverviewSchema,
  machineGraphSchema,
} from './debug-schemas.js';

export interface OpenApiOptions {
  version: string;
  operations: readonly ApiOperation[];
}

/** Named components: a schema used in several places is one `$ref`. */
const COMPONENTS: Record<string, z.ZodType> = {
  Error: errorBodySchema,
  Registration: registrationSchema,
  HeartbeatReply: heartbeatReplySchema,
  ListedPool: listedPoolSchema,
  PoolList: poolListSchema,
  PoolId: poolIdSchema,
  RegionStatus: regionStatusSchema,
  WatchUpsert: watchEventSchemas.upsert,
  WatchDelete: watchEventSchemas.delete,
  DebugPool: debugPoolSchema,
  DebugPoolList: debugPoolListSchema,
  DebugPoolDetail: debugPoolDetailSchema,
  DebugPoolSummary: debugPoolSummarySchema,
  DebugRegion: debugRegionSchema,
  FleetOverview: fleetOverviewSchema,
  MachineGraph: machineGraphSchema,
};

/** Statuses any request can get before it reaches a route (docs/contract.md §5, §11). */
const EVERY_ROUTE: Record<number, ApiResponse> = {
  400: { description: 'a request that is not valid HTTP/1.1 (a malformed request line or header, a bad Content-Length, no Host or two of them, a Host that is no host)', errors: ['bad_request'] },
  408: { description: 'the request headers took more than 10 s, or the whole request more than 30 s', errors: ['request_timeout'] },
  414: { description: 'a request target longer than 8,192 bytes', errors: ['uri_too_long'] },
  417: { description: 'an Expect header other than 100-continue', errors: ['expectation_failed'] },
  431: { description: 'request headers over 16 KiB', errors: ['headers_too_large'] },
  500: { description: 'a defect (an unexpected exception), logged as "request failed"', errors: ['internal'] },
};

const wwwAuthenticate = z.string().meta({ description: 'Bearer realm="poolscope", with error="invalid_token" for a token that matches none (RFC 6750 §3)' });

/** What a route's access adds to its statuses. */
const BY_ACCESS: Record<Access, Record<number, ApiResponse>> = {
  write: {
    401: {
      description: 'with --auth-token-file: no Authorization header, another scheme than Bearer, or a token that matches none',
      errors: ['unauthorized'],
      headers: { 'WWW-Authenticate': wwwAuthenticate },
    },
    403: {
      description: 'a read token, which cannot write (insufficient_scope, WWW-Authenticate error="insufficient_scope"); or a scoped write token or client certificate whose scopes do not cover the pool (forbidden)',
      errors: ['insufficient_scope', 'forbidden'],
      headers: { 'WWW-Authenticate': wwwAuthenticate },
    },
  },
  read: {
    401: {
      description: 'with --read-token-file: no Authorization header, another scheme than Bearer, or a token that is neither a read nor a write token',
      errors: ['unauthorized'],
      headers: { 'WWW-Authenticate': wwwAuthenticate },
    },
  },
  probe: {},
};

/**
 * Who may call an operation: one of these requirement sets. The guards are switched on by configuration
 * (docs/contract.md §8), so each set without a token stands for a replica run without that token file,
 * and each is also listed with a client certificate for a replica run with --tls-client-ca-path.
 */
const SECURITY: Record<Access, Record<string, string[]>[]> = {
  write: withMutualTls([{ writeToken: [] }, {}]),
  read: withMutualTls([{ readToken: [] }, { writeToken: [] }, {}]),
  probe: withMutualTls([{}]),
};

function withMutualTls(sets: Record<string, string[]>[]): Record<string, string[]>[] {
  return [...sets, ...sets.map((set) => ({ ...set, mutualTLS: [] }))];
}

const SECURITY_SCHEMES = {
  writeToken: {
    type: 'http' as const,
    scheme: 'bearer',
    description: 'A token of --auth-token-file: writes (POST /pools), and reads too. Without that flag writes are open.',
  },
  readToken: {
    type: 'http' as const,
    scheme: 'bearer',
    description: 'A token of --read-token-file: every route but POST /pools and the probes. Without that flag reads are open.',
  },
};

/** OpenAPI 3.1's own scheme, which zod-openapi's types (written for 3.0 too) do not name. */
const MUTUAL_TLS = {
  type: 'mutualTLS',
  description: 'With --tls-client-ca-path every connection presents a client certificate signed by that CA, the probes included.',
};

export function openApiDocument(options: OpenApiOptions): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const op of options.operations) {
    const item = (paths[op.path] ??= {});
    item[op.method] = operationObject(op, false);
    if (op.method === 'get') item.head = operationObject(op, true);
  }
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'poolscope',
        version: options.version,
        description:
          'Global pool discovery for model-serving pools. PoolRelays heartbeat registrations (POST /pools); routers read the listed pools (GET /pools, GET /pools/watch). Generated from the zod schemas the service validates with; see docs/contract.md in the repository.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/', description: 'the replica that served this document' }],
      paths,
      components: { schemas: COMPONENTS, securitySchemes: SECURITY_SCHEMES },
    },
    { override: requestDefaultsOptional },
  );
  document.components!.securitySchemes!.mutualTLS = MUTUAL_TLS as never;
  return oneNamePerSchema(document as unknown as Record<string, unknown>);
}

/**
 * A component is rendered for requests and for replies when the two differ (zod writes
 * additionalProperties: false only for what it outputs), `X` and `XOutput`; a schema only ever answered
 * with keeps its own name, and a rendering nothing refers to is left out.
 */
function oneNamePerSchema(document: Record<string, unknown>): Record<string, unknown> {
  const schemas = (document.components as { schemas: Record<string, unknown> }).schemas;
  let text = JSON.stringify(document);
  const uses = (name: string) => text.split(`"#/components/schemas/${name}"`).length - 1;
  for (const name of Object.keys(schemas)) {
    if (name.endsWith('Output') || uses(name) > 0) continue;
    const output = `${name}Output`;
    if (!(output in schemas)) continue;
    text = text.replaceAll(`"#/components/schemas/${output}"`, `"#/components/schemas/${name}"`);
    const parsed = JSON.parse(text) as { components: { schemas: Record<string, unknown> } };
    parsed.components.schemas[name] = parsed.components.schemas[output];
    delete parsed.components.schemas[output];
    text = JSON.stringify(parsed);
  }
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * A field with a default is optional in a request: its `default` would make generators (openapi-typescript's
 * defaultNonNullable) require it, so in request schemas the default is said in words instead.
 */
function requestDefaultsOptional(context: { jsonSchema: Record<string, unknown>; io: 'input' | 'output' }): void {
  const { jsonSchema, io } = context;
  if (io !== 'input' || !('default' in jsonSchema)) return;
  const said = `Default: ${JSON.stringify(jsonSchema.default)}.`;
  jsonSchema.description = typeof jsonSchema.description === 'string' ? `${jsonSchema.description} ${said}` : said;
  delete jsonSchema.default;
}

function operationObject(op: ApiOperation, head: boolean): ZodOpenApiOperationObject {
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  const all = { ...EVERY_ROUTE, ...BY_ACCESS[op.access], ...op.responses };
  for (const status of Object.keys(all).sort()) {
    responses[status] = responseObject(all[Number(status)]!, head);
  }
  return {
    operationId: head ? `${op.operationId}Head` : op.operationId,
    summary: head ? `${op.summary} (headers only)` : op.summary,
    ...(op.description === undefined ? {} : { description: op.description }),
    security: SECURITY[op.access],
    ...(op.query || op.headers || op.params
      ? { requestParams: { ...(op.query && { query: op.query }), ...(op.headers && { header: op.headers }), ...(op.params && { path: op.params }) } }
      : {}),
    ...(op.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            ...(op.body.description === undefined ? {} : { description: op.body.description }),
            content: Object.fromEntries(op.body.contentTypes.map((type) => [type, { schema: bodySchema(op.body!.schema, type) }])),
          },
        }),
    responses,
  };
}

/**
 * A JSON body, or the same JSON under a form type (`curl -d` labels every body so; the bytes are still
 * JSON and parsed strictly as JSON): then the document says the body is a string holding that JSON, so no
 * generator encodes it as a form.
 */
function bodySchema(schema: z.ZodType, contentType: string): z.ZodType {
  if (contentType === 'application/json') return schema;
  return z.string().meta({
    description: 'The same JSON as the application/json body, sent under this content type.',
    contentMediaType: 'application/json',
  });
}

function responseObject(response: ApiResponse, head: boolean): ZodOpenApiResponseObject {
  const content: NonNullable<ZodOpenApiResponseObject['content']> = {};
  if (!head) {
    if (response.json) content['application/json'] = { schema: response.json };
    if (response.errors) content['application/json'] = { schema: errorBodySchema };
    if (response.body) content[response.body.contentType] = { schema: response.body.schema };
    if (response.events) content['text/event-stream'] = { schema: eventStreamSchema(response.events) };
  }
  const description = response.errors ? `${response.description} (${codes(response.errors)})` : response.description;
  return {
    description,
    ...(response.headers ? { headers: z.object(response.headers) } : {}),
    ...(Object.keys(content).length > 0 ? { content } : {}),
  };
}

const codes = (list: readonly ErrorCode[]) => `code: ${list.join(' or ')}`;

/**
 * An event stream, described the way OpenAPI 3.2 describes one item of it (`event`, `id`, `data`,
 * `retry`), one schema per event name: `data` is shown parsed (the stream carries it as one line of JSON).
 */
function eventStreamSchema(events: Record<string, z.ZodType>): z.ZodType {
  const items = Object.entries(events).map(([name, data]) =>
    z
      .object({
        event: z.literal(name),
        id: z.string().optional().meta({ description: 'the revision after this event (resume with Last-Event-ID)' }),
        retry: z.int().optional().meta({ description: 'the reconnection delay, ms' }),
        data,
      })
      .meta({ title: name }),
  );
  const [first, ...rest] = items;
  return (rest.length === 0 ? first! : z.union([first!, ...rest])).meta({
    description: 'One event of the stream: `event:` names it, `data:` is one line of JSON, `id:` the revision where there is one.',
  });
}
