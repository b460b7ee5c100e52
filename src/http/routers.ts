// The routers' API (docs/contract.md §10), read like the table:
//   POST /routers         a router replica's heartbeat: the same lease, interval, checks, error body and
//                         tokens as POST /pools; a scoped credential needs the `routers` scope
//   GET  /routers         the listed routers (?region=): ETag, 304, gzip or br from the view's cache, as GET /pools
//   GET  /routers/watch   the same, as Server-Sent Events, on the same hub machinery as /pools/watch
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  debugRouterListSchema,
  describeIssue,
  MAX_BODY_BYTES,
  routerHeartbeatReplySchema,
  routerListSchema,
  routerRegistrationSchema,
  routerWatchEventSchemas,
  streamEndSchemas,
  type ApiOperation,
  type DebugRouterList,
  type ListedRouter,
  type RouterHeartbeatReply,
  type RouterRegistration,
} from '../contract/index.js';
import type { RouterView } from '../join/router-join.js';
import type { WatchStreamName } from '../metrics/limit-metrics.js';
import { canonicalJson } from '../store/canonical-json.js';
import { StoreUnavailableError, type RegistrationStore } from '../store/types.js';
import { negotiateEncoding, noneMatchHolds } from './conditional.js';
import { ApiError } from './errors.js';
import { listBodyHeaders, listHeaders, noCacheHeader } from './list-headers.js';
import { bodyAborted, clientLeft, isEncoded, isJsonType, JSON_CONTENT_TYPES } from './heartbeat.js';
import { routerTarget } from './scopes.js';
import { DEFAULT_WATCH_LIMITS, WATCH_RETRY_AFTER_SECS, type StreamHooks, type WatchLimits } from './stream-gate.js';
import { WatchHub, type WatchStats } from './watch-hub.js';
import { watchHandler } from './watch.js';
import type { WriteAuthority } from './write-authority.js';

export interface RoutersRoutesDeps {
  view: RouterView;
  store: RegistrationStore<RouterRegistration>;
  leaseMs: number;
  heartbeatIntervalMs: number;
  writes?: WriteAuthority;
  keepAliveMs: number;
  watchLimits?: WatchLimits;
  shutdown?: AbortSignal;
  logger?: Logger;
  onDropped?: StreamHooks['onDropped'];
  onWatchRefused?: StreamHooks['onRefused'];
  onWatchHub?: (hub: WatchStats, stream: WatchStreamName) => void;
}

export function routersRoutes(deps: RoutersRoutesDeps): Hono {
  const hub = new WatchHub({
    view: deps.view,
    stream: 'routers',
    ...(deps.watchLimits ?? DEFAULT_WATCH_LIMITS),
    keepAliveMs: deps.keepAliveMs,
    logger: deps.logger,
    onDropped: deps.onDropped,
  });
  deps.onWatchHub?.(hub, 'routers');
  if (deps.shutdown?.aborted) hub.close();
  else deps.shutdown?.addEventListener('abort', () => hub.close(), { once: true });
  const tooLarge = () => {
    throw new ApiError(413, 'payload_too_large', `the body must be at most ${MAX_BODY_BYTES} bytes`);
  };
  const countChunked = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  const postRouters = async (c: Context): Promise<Response> => {
    try {
      const length = c.req.header('content-length');
      if (length === undefined || c.req.header('transfer-encoding') !== undefined) {
        let response: Response | undefined;
        const refused = await countChunked(c, async () => {
          response = await routerHeartbeat(deps, c);
        });
        return response ?? refused ?? c.res;
      }
      if (Number(length) > MAX_BODY_BYTES) tooLarge();
      return await routerHeartbeat(deps, c);
    } catch (error) {
      if (!clientLeft(c, error)) throw error;
      const quiet = bodyAborted({ logger: deps.logger }, c, error);
      return c.json(quiet.body(), quiet.status);
    }
  };
  return new Hono()
    .post('/routers', postRouters)
    .get('/routers', async (c) => {
      const region = c.req.query('region');
      const coding = negotiateEncoding(c.req.header('accept-encoding'));
      const headers: Record<string, string> = { vary: 'Accept-Encoding', 'cache-control': 'no-cache' };
      const current = deps.view.etag(region, coding);
      if (noneMatchHolds(c.req.header('if-none-match'), current)) return c.body(null, 304, { ...headers, etag: current });
      const { etag, bytes } = deps.view.encoded(region, coding);
      if (coding !== 'identity') headers['content-encoding'] = coding;
      return c.body(await bytes, 200, { ...headers, etag, 'content-type': 'application/json' });
    })
    .get('/routers/watch', watchHandler({ hub, onWatchRefused: deps.onWatchRefused }))
    .get('/debug/routers', (c) => c.json(debugRouters(deps.view)));
}

/** The listed routers by region ("" for none) and source, both sorted, with the view's completeness. */
function debugRouters(view: RouterView): DebugRouterList {
  const byRegion = new Map<string, Map<ListedRouter['source'], ListedRouter[]>>();
  for (const router of view.list().routers) {
    const region = router.region ?? '';
    let sources = byRegion.get(region);
    if (sources === undefined) byRegion.set(region, (sources = new Map()));
    sources.set(router.source, [...(sources.get(router.source) ?? []), router]);
  }
  const sorted = <T>(entries: Iterable<[string, T]>) => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    complete: view.complete,
    reasons: [...view.reasons],
    regions: sorted(byRegion).map(([region, sources]) => ({
      region,
      sources: sorted(sources).map(([source, routers]) => ({ source: source as ListedRouter['source'], routers })),
    })),
  };
}

/** The checks of POST /pools in the same order (type, coding, JSON, fields, scope), then the store. */
async function routerHeartbeat(deps: RoutersRoutesDeps, c: Context): Promise<Response> {
  if (!isJsonType(c.req.header('content-type'))) {
    throw new ApiError(415, 'unsupported_media_type', 'the body must be JSON (Content-Type: application/json)');
  }
  if (isEncoded(c.req.header('content-encoding'))) {
    throw new ApiError(415, 'unsupported_media_type', 'the body must not be encoded (no Content-Encoding: send plain JSON)');
  }
  const text = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'invalid_json', `the body is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = routerRegistrationSchema.safeParse(body);
  if (!parsed.success) {
    const { code, field, message } = describeIssue(parsed.error.issues);
    throw new ApiError(400, code, message, field);
  }
  const registration = parsed.data;
  deps.writes?.authorize(c, routerTarget(registration.id));
  try {
    await deps.store.heartbeat(registration, canonicalJson(registration));
  } catch (error) {
    if (error instanceof StoreUnavailableError) {
      throw new ApiError(503, 'store_unavailable', `the registration store cannot be reached: ${error.message}`);
    }
    throw error;
  }
  const reply: RouterHeartbeatReply = { router: registration.id, lease_ms: deps.leaseMs, heartbeat_interval_ms: deps.heartbeatIntervalMs };
  return c.json(reply);
}

/** The routes above, for the OpenAPI document (docs/contract.md §10, §11). */
export const routersOperations: ApiOperation[] = [
  {
    method: 'get',
    path: '/debug/routers',
    operationId: 'debugRouters',
    summary: 'The listed routers by region and source, with why the list may be incomplete',
    access: 'read',
    responses: { 200: { description: 'every listed router, grouped by its region ("" for none), then by source', json: debugRouterListSchema } },
  },
  {
    method: 'post',
    path: '/routers',
    operationId: 'routerHeartbeat',
    summary: "A router replica's heartbeat: renew (or create) the router's lease",
    description:
      'The lease and interval of POST /pools, and its checks in the same order; a request refused by any changes nothing: token (401, 403: a scoped credential needs the `routers` scope), declared size (413), content type and coding (415), JSON (400), fields (400).',
    access: 'write',
    body: {
      schema: routerRegistrationSchema,
      contentTypes: JSON_CONTENT_TYPES,
      description: `The router's registration, as JSON of at most ${MAX_BODY_BYTES} bytes, without a Content-Encoding. Unknown keys are refused.`,
    },
    responses: {
      200: { description: 'the lease was renewed; heartbeat again after heartbeat_interval_ms', json: routerHeartbeatReplySchema },
      400: {
        description: 'the body is not JSON, or a field breaks its rule (field: the dotted path, or the unknown key)',
        errors: ['invalid_json', 'invalid_field', 'unknown_field', 'bad_request'],
      },
      413: { description: `a body over ${MAX_BODY_BYTES} bytes`, errors: ['payload_too_large'] },
      415: { description: 'a content type other than JSON, or a Content-Encoding', errors: ['unsupported_media_type'] },
      503: { description: 'the store could not be reached within its command timeout (a retry is safe)', errors: ['store_unavailable'] },
    },
  },
  {
    method: 'get',
    path: '/routers',
    operationId: 'listRouters',
    summary: 'The routers: registered, static (--router) and, in MCS modes, the Global Router Service’s Ready endpoints; sorted by id',
    access: 'read',
    query: z.object({ region: z.string().optional().meta({ description: 'only the routers whose region is exactly this' }) }),
    headers: z.object({
      'If-None-Match': z.string().optional().meta({ description: 'the ETag of the list held (a list of tags, or *): 304 while it is current' }),
      'Accept-Encoding': z.string().optional().meta({ description: 'br and gzip are offered (q-values honoured, q=0 refuses); identity otherwise' }),
    }),
    responses: {
      200: {
        description: 'the list; complete: false means routers may be missing (the caller rule of GET /pools)',
        json: routerListSchema,
        headers: listBodyHeaders,
      },
      304: { description: 'If-None-Match holds the current ETag; no body', headers: listHeaders },
    },
  },
  {
    method: 'get',
    path: '/routers/watch',
    operationId: 'watchRouters',
    summary: 'The routers as Server-Sent Events',
    description:
      'As /pools/watch: `retry:` first, then `resync` (the body of GET /routers), `upsert` and `delete` per change, a new `resync` when completeness or a region entry changes; `id:` the revision; Last-Event-ID within the replay window resumes; `closing` and `overloaded` as there.',
    access: 'read',
    headers: z.object({
      'Last-Event-ID': z.string().optional().meta({ description: 'the revision of the last event received from this replica' }),
      Accept: z.string().optional().meta({ description: 'with text/event-stream, a refusal by --max-watchers is an `overloaded` event instead of a 503' }),
    }),
    responses: {
      200: {
        description: 'the event stream (HEAD: its headers only, nothing subscribed)',
        events: { ...routerWatchEventSchemas, ...streamEndSchemas },
        headers: { 'Cache-Control': noCacheHeader },
      },
      503: {
        description: `--max-watchers router streams are open and the request does not accept text/event-stream; try again after Retry-After (${WATCH_RETRY_AFTER_SECS} s)`,
        errors: ['too_many_watchers'],
        headers: { 'Retry-After': z.string().meta({ description: 'seconds' }) },
      },
    },
  },
];
