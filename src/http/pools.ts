// The routers' and PoolRelays' API (docs/contract.md §5), read like the table:
//   POST /pools          a PoolRelay's heartbeat
//   GET  /pools          the listed pools (?model=): an ETag per revision, filter and coding, 304 while
//                        If-None-Match holds it, gzip or br from the view's cache (never compressed per request)
//   GET  /pools/watch    the same, as Server-Sent Events
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { MAX_BODY_BYTES } from '../contract/index.js';
import type { Logger } from 'pino';
import type { ListedView } from '../join/listed-view.js';
import { negotiateEncoding, noneMatchHolds } from './conditional.js';
import { ApiError } from './errors.js';
import { bodyAborted, clientLeft, heartbeatHandler, type HeartbeatDeps } from './heartbeat.js';
import { DEFAULT_WATCH_LIMITS, WatchHub, type WatchHubOptions, type WatchLimits, type WatchStats } from './watch-hub.js';
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
  onWatchHub?: (hub: WatchStats) => void;
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
  deps.onWatchHub?.(hub);
  if (deps.shutdown?.aborted) hub.close();
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
