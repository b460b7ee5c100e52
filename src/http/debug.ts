// Everything under /debug, for operators asking why a pool is (not) listed:
//   GET /debug/pools                     every pool actor this replica holds (listed or not): state, context, live
//                                        leases by region, history; with regions, the regions' entries of GET /pools
//   GET /debug/pools/{c}/{ns}/{name}     one of them
//   GET /debug                           the page (built into dist/debug-page by `npm run build`)
//   GET /debug/assets/*                  its script and style
//   GET /debug/machine                   the pool chart as data (MachineGraph), read from the machine definition
//   GET /debug/pools/watch               Server-Sent Events: `snapshot`, then `pools`, `pool`, `completeness`,
//                                        `regions` and `overview` (?pool=<key> picks the pool whose detail is sent)
//   GET /debug/pools/:key                one pool in full for the page, the key URL-encoded (us-east-1%2Fllm%2Fllama-70b)
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { streamEndSchemas, type ApiOperation, type PoolState } from '../contract/index.js';
import { describePool, type DebugPool, type DebugPoolList } from '../debug/describe.js';
import type { DebugFeed } from '../debug/feed.js';
import type { PageBundle } from '../debug/page-bundle.js';
import type { DebugStreamEvent, DebugStreamEvents } from '../debug/types.js';
import type { Join } from '../join/join.js';
import { ApiError } from './errors.js';
import { noCacheHeader } from './list-headers.js';
import {
  debugPoolDetailSchema,
  debugPoolListSchema,
  debugPoolSchema,
  debugStreamEventSchemas,
  machineGraphSchema,
} from '../openapi/debug-schemas.js';
import { namedFrame, subscriptionSse } from './queued-sse.js';
import { WATCH_RETRY_AFTER_SECS, type StreamGate } from './stream-gate.js';

export function debugRoutes(join: Join): Hono {
  const one = (key: string) => {
    const actor = join.directory.get(key);
    if (!actor) throw new ApiError(404, 'not_found', `no pool ${key} on this replica`);
    const snapshot = actor.getSnapshot();
    return describePool(snapshot.context, snapshot.value as PoolState);
  };
  return new Hono()
    .get('/debug/pools', (c) => {
      const pools: DebugPool[] = [];
      for (const key of [...join.directory.keys()].sort()) pools.push(one(key));
      const regions = join.hasRegions ? join.view.regions : undefined;
      const body: DebugPoolList = {
        complete: join.view.complete,
        reasons: [...join.view.reasons],
        ...(regions ? { regions: [...regions] } : {}),
        pools,
      };
      return c.json(body);
    })
    .get('/debug/pools/:cluster_id/:namespace/:name', (c) => {
      const { cluster_id, namespace, name } = c.req.param();
      return c.json(one(`${cluster_id}/${namespace}/${name}`));
    });
}

export interface DebugPageDeps {
  feed: DebugFeed;
  /** The built page; undefined: /debug answers 503 naming the build step. */
  bundle: PageBundle | undefined;
  /** SSE keep-alive comment period (default 15 s). */
  keepAliveMs?: number;
  /** Aborted when the server drains (ends every stream). */
  shutdown?: AbortSignal;
  /** The /debug/pools/watch streams, against `--max-watchers` and `--watch-max-backlog-bytes`. */
  streams: StreamGate;
}

/**
 * Everything the page loads comes from here: the browser refuses any other origin, so the page cannot
 * reach a CDN or send anything off-site even if a dependency tried.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function debugPageRoutes(deps: DebugPageDeps): Hono {
  const serveFile = (c: Context, path: string, cache: string): Response => {
    if (!deps.bundle) {
      throw new ApiError(503, 'not_ready', 'the /debug page was not built: run `npm run build` (npm ci does it)');
    }
    const file = deps.bundle.files.get(path);
    if (!file) throw new ApiError(404, 'not_found', `no file ${path} in the /debug page`);
    return c.body(file.body as Uint8Array<ArrayBuffer>, 200, {
      'content-type': file.contentType,
      'cache-control': cache,
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
    });
  };
  return new Hono()
    .get('/debug', (c) => serveFile(c, 'index.html', 'no-cache'))
    .get('/debug/', (c) => serveFile(c, 'index.html', 'no-cache'))
    // Asset names carry a content hash, so they never change under the same name.
    .get('/debug/assets/:file', (c) => serveFile(c, `assets/${c.req.param('file')}`, 'public, max-age=31536000, immutable'))
    .get('/debug/machine', (c) => c.json(deps.feed.graph))
    .get('/debug/pools/watch', (c) => watchDebug(c, deps))
    .get('/debug/pools/:key', (c) => {
      const key = c.req.param('key');
      const detail = deps.feed.detail(key);
      if (!detail) throw new ApiError(404, 'not_found', `no pool ${key} on this replica`);
      return c.json(detail);
    });
}

function watchDebug(c: Context, deps: DebugPageDeps): Response {
  const selected = c.req.query('pool') || null;
  let snapshot: DebugStreamEvents['snapshot'] | undefined;
  return subscriptionSse<DebugStreamEvent>(c, {
    first: () => [{ kind: 'snapshot', data: (snapshot = deps.feed.snapshot(selected)) }],
    subscribe: (push) => deps.feed.subscribe(selected, push, snapshot),
    frame: (event) => namedFrame(event.kind, JSON.stringify(event.data)),
    keepAliveMs: deps.keepAliveMs ?? 15_000,
    gate: deps.streams,
    shutdown: deps.shutdown,
  });
}

const notFound = { description: 'no such pool on this replica', errors: ['not_found'] } as const;
const notBuilt = { description: 'the page was not built (npm run build)', errors: ['not_ready'] } as const;

/** Everything under /debug, for the OpenAPI document (its assets and /debug/ are the page's own files). */
export const debugOperations: ApiOperation[] = [
  {
    method: 'get',
    path: '/debug/pools',
    operationId: 'debugPools',
    summary: "Every pool's state, context and recent transitions, unregistered ones too",
    access: 'read',
    responses: { 200: { description: 'every pool this replica holds', json: debugPoolListSchema } },
  },
  {
    method: 'get',
    path: '/debug/pools/{cluster_id}/{namespace}/{name}',
    operationId: 'debugPool',
    summary: 'One pool',
    access: 'read',
    params: z.object({
      cluster_id: z.string().meta({ description: "the pool's cluster, URL-encoded" }),
      namespace: z.string().meta({ description: "the pool's namespace, URL-encoded" }),
      name: z.string().meta({ description: "the pool's name, URL-encoded" }),
    }),
    responses: { 200: { description: 'the pool', json: debugPoolSchema }, 404: notFound },
  },
  {
    method: 'get',
    path: '/debug',
    operationId: 'debugPage',
    summary: "A page that draws each pool's state machine, its current state and its history, live",
    access: 'read',
    responses: {
      200: {
        description: 'the page (it loads nothing from any other origin)',
        body: { contentType: 'text/html', schema: z.string() },
        headers: { 'Cache-Control': noCacheHeader },
      },
      503: notBuilt,
    },
  },
  {
    method: 'get',
    path: '/debug/machine',
    operationId: 'debugMachine',
    summary: 'The pool state chart as data, read from the machine definition',
    access: 'read',
    responses: { 200: { description: 'states and transitions', json: machineGraphSchema } },
  },
  {
    method: 'get',
    path: '/debug/pools/watch',
    operationId: 'debugWatch',
    summary: 'What /debug follows, as Server-Sent Events',
    description:
      'Every stream starts with `retry:`, then `snapshot`, then `pools`, `pool` (the detail of ?pool=), `completeness`, `regions` (with regions) and `overview` as they change; `closing` when the replica drains.',
    access: 'read',
    query: z.object({ pool: z.string().optional().meta({ description: 'the pool whose detail is sent (cluster_id/namespace/name)' }) }),
    responses: {
      200: {
        description: 'the event stream (HEAD: its headers only)',
        events: { ...debugStreamEventSchemas, ...streamEndSchemas },
        headers: { 'Cache-Control': noCacheHeader },
      },
      503: {
        description: `--max-watchers /debug streams are open and the request does not accept text/event-stream; try again after Retry-After (${WATCH_RETRY_AFTER_SECS} s)`,
        errors: ['too_many_watchers'],
        headers: { 'Retry-After': z.string().meta({ description: 'seconds' }) },
      },
    },
  },
  {
    method: 'get',
    path: '/debug/pools/{key}',
    operationId: 'debugPoolByKey',
    summary: 'One pool in full, with the causes of its transitions',
    access: 'read',
    params: z.object({ key: z.string().meta({ description: 'cluster_id/namespace/name, URL-encoded' }) }),
    responses: { 200: { description: 'the pool', json: debugPoolDetailSchema }, 404: notFound },
  },
];
