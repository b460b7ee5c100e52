// The routers' and PoolRelays' API (docs/contract.md §5), read like the table:
//   POST /pools          a PoolRelay's heartbeat
//   GET  /pools          the listed pools (?model=): an ETag per revision, filter and coding, 304 while
//                        If-None-Match holds it, gzip or br from the view's cache (never compressed per request)
//   GET  /pools/watch    the same, as Server-Sent Events
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import {
  heartbeatReplySchema,
  MAX_BODY_BYTES,
  poolListSchema,
  registrationSchema,
  streamEndSchemas,
  watchEventSchemas,
  type ApiOperation,
} from '../contract/index.js';
import type { Logger } from 'pino';
import type { ListedView } from '../join/listed-view.js';
import type { WatchStreamName } from '../metrics/limit-metrics.js';
import { negotiateEncoding, noneMatchHolds } from './conditional.js';
import { ApiError } from './errors.js';
import { listBodyHeaders, listHeaders, noCacheHeader } from './list-headers.js';
import { bodyAborted, clientLeft, heartbeatHandler, JSON_CONTENT_TYPES, type HeartbeatDeps } from './heartbeat.js';
import { DEFAULT_WATCH_LIMITS, WATCH_RETRY_AFTER_SECS, type WatchLimits } from './stream-gate.js';
import { WatchHub, type WatchHubOptions, type WatchStats } from './watch-hub.js';
import { watchHandler, type WatchDeps } from './watch.js';

// Tokens are checked before these routes, by the app's access guard (auth.ts).
export interface PoolsRoutesDeps extends HeartbeatDeps, Omit<WatchDeps, 'hub'>, Pick<WatchHubOptions, 'onSubscribers' | 'onDropped'> {
  view: ListedView;
  /** SSE keep-alive comment period. */
  keepAliveMs: number;
  /** Default: DEFAULT_WATCH_LIMITS (docs/contract.md §8). */
  watchLimits?: WatchLimits;
  /** Aborted when the server drains: every watch stream ends so connections can close. */
  shutdown?: AbortSignal;
  logger?: Logger;
  /** Given the hub once built (metrics read its streams and backlog). */
  onWatchHub?: (hub: WatchStats, stream: WatchStreamName) => void;
}

export function poolsRoutes(deps: PoolsRoutesDeps): Hono {
  const tooLarge = () => {
    deps.onOutcome?.('invalid');
    throw new ApiError(413, 'payload_too_large', `the body must be at most ${MAX_BODY_BYTES} bytes`);
  };
  const hub = new WatchHub({
    view: deps.view,
    ...(deps.watchLimits ?? DEFAULT_WATCH_LIMITS),
    keepAliveMs: deps.keepAliveMs,
    logger: deps.logger,
    onSubscribers: deps.onSubscribers,
    onDropped: deps.onDropped,
  });
  deps.onWatchHub?.(hub, 'pools');
  if (deps.shutdown?.aborted) hub.close();
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, a signal aborts once; `once` only lets the listener go after it
  else deps.shutdown?.addEventListener('abort', () => hub.close(), { once: true });
  // Hono's bodyLimit reads the raw web stream, which makes @hono/node-server build a full Request for every
  // POST (measured: about half a heartbeat's CPU). A body with a Content-Length is framed by Node's HTTP
  // parser to exactly that length, so checking the header is enough; only chunked bodies are counted.
  const countChunked = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  const heartbeat = heartbeatHandler(deps);
  // One handler, not a middleware and a handler under a sub-app error handler: Hono wraps every route of a
  // sub-app that has its own onError in one more dispatch, on every heartbeat.
  const postPools = async (c: Context): Promise<Response> => {
    try {
      const length = c.req.header('content-length');
      if (length === undefined || c.req.header('transfer-encoding') !== undefined) {
        let response: Response | undefined;
        const refused = await countChunked(c, async () => {
          response = await heartbeat(c);
        });
        return response ?? refused ?? c.res;
      }
      if (Number(length) > MAX_BODY_BYTES) tooLarge();
      return await heartbeat(c);
    } catch (error) {
      // A body read that fails because the client left (wherever it is read: the chunked counter, the
      // handler) is answered quietly; every other error goes on to the app's renderer.
      if (!clientLeft(c, error)) throw error;
      const quiet = bodyAborted(deps, c, error);
      return c.json(quiet.body(), quiet.status);
    }
  };
  const app = new Hono();
  return app
    .post('/pools', postPools)
    .get('/pools', async (c) => {
      const model = c.req.query('model');
      const coding = negotiateEncoding(c.req.header('accept-encoding'));
      // A shared cache may keep the reply but must ask again each time (the list changes any moment).
      const headers: Record<string, string> = { vary: 'Accept-Encoding', 'cache-control': 'no-cache' };
      const current = deps.view.etag(model, coding);
      if (noneMatchHolds(c.req.header('if-none-match'), current)) return c.body(null, 304, { ...headers, etag: current });
      const { etag, bytes } = deps.view.encoded(model, coding);
      if (coding !== 'identity') headers['content-encoding'] = coding;
      return c.body(await bytes, 200, { ...headers, etag, 'content-type': 'application/json' });
    })
    .get('/pools/watch', watchHandler({ hub, onWatchRefused: deps.onWatchRefused }));
}

/** The routes above, for the OpenAPI document (docs/contract.md §5, §11). */
export const poolsOperations: ApiOperation[] = [
  {
    method: 'post',
    path: '/pools',
    operationId: 'heartbeat',
    summary: "A PoolRelay's heartbeat: renew (or create) the pool's lease",
    description:
      'Checks run in this order, and a request refused by any changes nothing: token (401, 403), declared size (413), content type and coding (415), JSON (400), fields (400).',
    access: 'write',
    body: {
      schema: registrationSchema,
      contentTypes: JSON_CONTENT_TYPES,
      description: `The registration, as JSON of at most ${MAX_BODY_BYTES} bytes, without a Content-Encoding. Unknown keys are refused at any depth. Any application/*+json type is taken as application/json.`,
    },
    responses: {
      200: { description: 'the lease was renewed; heartbeat again after heartbeat_interval_ms', json: heartbeatReplySchema },
      400: {
        description: 'the body is not JSON, or a field breaks its rule (field: the dotted path, or the unknown key)',
        errors: ['invalid_json', 'invalid_field', 'unknown_field', 'bad_request'],
      },
      413: { description: `a body over ${MAX_BODY_BYTES} bytes (declared, or counted as it arrives); with Expect: 100-continue, answered before any 100 Continue`, errors: ['payload_too_large'] },
      415: { description: 'a content type other than JSON, or a Content-Encoding', errors: ['unsupported_media_type'] },
      503: { description: 'the store could not be reached within its command timeout (a retry is safe: heartbeats are idempotent)', errors: ['store_unavailable'] },
    },
  },
  {
    method: 'get',
    path: '/pools',
    operationId: 'listPools',
    summary: 'The listed pools (live and frontendless), sorted by key',
    access: 'read',
    query: z.object({ model: z.string().optional().meta({ description: 'only the pools whose model is exactly this' }) }),
    headers: z.object({
      'If-None-Match': z.string().optional().meta({ description: 'the ETag of the list held (a list of tags, or *): 304 while it is current' }),
      'Accept-Encoding': z.string().optional().meta({ description: 'br and gzip are offered (q-values honoured, q=0 refuses); identity otherwise' }),
    }),
    responses: {
      200: {
        description: 'the list; complete: false means pools may be missing (the caller rule: keep the ones you know)',
        json: poolListSchema,
        headers: listBodyHeaders,
      },
      304: { description: 'If-None-Match holds the current ETag: the list held is still the list; no body', headers: listHeaders },
    },
  },
  {
    method: 'get',
    path: '/pools/watch',
    operationId: 'watchPools',
    summary: 'The listed pools as Server-Sent Events',
    description:
      'Every stream starts with `retry:`. Then `resync` (the body of GET /pools), `upsert` and `delete` per change, and a new `resync` when completeness or a region entry changes or a source relists; `id:` is the revision; a comment at least every 15 s. A Last-Event-ID within the replay window (at least the last 10,000 changes) resumes: a `: resumed` comment, then the events after it, no resync. A stream the server ends has a last event, `closing` (the replica drains) or `overloaded` (refused by --max-watchers, retry after `retry:` ms); a stream that ends without one was cut: reconnect with Last-Event-ID. On HTTP/1.1 the stream is chunked, so a cut connection is also an incomplete message.',
    access: 'read',
    headers: z.object({
      'Last-Event-ID': z.string().optional().meta({ description: 'the revision of the last event received from this replica' }),
      Accept: z.string().optional().meta({ description: 'with text/event-stream, a refusal by --max-watchers is an `overloaded` event instead of a 503' }),
    }),
    responses: {
      200: {
        description: 'the event stream (HEAD: its headers only, nothing subscribed)',
        events: { ...watchEventSchemas, ...streamEndSchemas },
        headers: { 'Cache-Control': noCacheHeader },
      },
      503: {
        description: `--max-watchers streams are open and the request does not accept text/event-stream; try again after Retry-After (${WATCH_RETRY_AFTER_SECS} s) or on another replica`,
        errors: ['too_many_watchers'],
        headers: { 'Retry-After': z.string().meta({ description: 'seconds' }) },
      },
    },
  },
];
