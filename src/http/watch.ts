// GET /pools/watch: Server-Sent Events (docs/contract.md §5). First a `resync` (the body of GET /pools),
// then `upsert` and `delete` per change, and a new `resync` whenever completeness changes or a source
// relists; every stream is fed by the one WatchHub. A request whose Last-Event-ID is a revision within the
// hub's replay window resumes: the changes after it, no resync. HEAD answers the stream's headers and subscribes
// nothing. Beyond `--max-watchers` streams, 503 `too_many_watchers` with Retry-After (§8).
import type { Context } from 'hono';
import { ApiError } from './errors.js';
import type { WatchHub } from './watch-hub.js';
import { nodeSink, SSE_HEADERS, streamSink } from './watch-sink.js';

/** Seconds a refused watcher is asked to wait before it tries again. */
export const WATCH_RETRY_AFTER_SECS = 5;

export interface WatchDeps {
  hub: WatchHub;
  /** A watcher refused by `--max-watchers`. */
  onWatchRefused?: () => void;
}

export function watchHandler(deps: WatchDeps) {
  return function watch(c: Context): Response {
    if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: SSE_HEADERS });
    if (deps.hub.full) {
      deps.onWatchRefused?.();
      const error = new ApiError(503, 'too_many_watchers', `this replica serves its maximum of ${deps.hub.maxWatchers} watch streams (--max-watchers); retry later or on another replica`,
      );
      return c.json(error.body(), 503, { 'retry-after': String(WATCH_RETRY_AFTER_SECS) });
    }
    const { sink, response } = nodeSink(c) ?? streamSink();
    deps.hub.add(sink, c.req.header('last-event-id'));
    return response;
  };
}
