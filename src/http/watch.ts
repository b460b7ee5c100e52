// GET /pools/watch: Server-Sent Events (docs/contract.md §5). First a `resync` (the body of GET /pools),
// then `upsert` and `delete` per change, and a new `resync` whenever completeness changes or a source
// relists; every stream is fed by the one WatchHub. A request whose Last-Event-ID is a revision within the
// hub's replay window resumes: the changes after it, no resync. HEAD answers the stream's headers and subscribes
// nothing. Beyond `--max-watchers` streams the watcher is refused (§8): an SSE client gets an `overloaded`
// event it retries after by itself, anyone else 503 `too_many_watchers` with Retry-After (sse.ts, §11).
import type { Context } from 'hono';
import { refuseStream, type StreamHooks } from './stream-gate.js';
import type { WatchHub } from './watch-hub.js';
import { nodeSink, SSE_HEADERS, streamSink } from './watch-sink.js';

export { WATCH_RETRY_AFTER_SECS } from './stream-gate.js';

export interface WatchDeps {
  hub: WatchHub;
  /** A watcher refused by `--max-watchers`. */
  onWatchRefused?: StreamHooks['onRefused'];
}

export function watchHandler(deps: WatchDeps) {
  return function watch(c: Context): Response {
    if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: SSE_HEADERS });
    if (deps.hub.full) return refuseStream(c, { maxWatchers: deps.hub.maxWatchers, stream: deps.hub.stream, onRefused: deps.onWatchRefused });
    const { sink, response } = nodeSink(c) ?? streamSink();
    deps.hub.add(sink, c.req.header('last-event-id'));
    return response;
  };
}
