// GET /pools/watch: Server-Sent Events. First a `resync` (the body of GET /pools), then `upsert` and
// `delete` per change, and a new `resync` whenever completeness changes or a source relists. A comment
// line keeps the connection alive at least every `keepAliveMs`.
import type { Context } from 'hono';
import type { WatchEvent } from '../contract/index.js';
import type { ListedView } from '../join/listed-view.js';
import { queuedSse } from './queued-sse.js';

export interface WatchDeps {
  view: ListedView;
  keepAliveMs: number;
  onSubscribers?: (count: number) => void;
  /** Aborted when the server drains: every stream ends so connections can close. */
  shutdown?: AbortSignal;
}

export function watchHandler(deps: WatchDeps) {
  return function watch(c: Context): Response {
    return queuedSse<WatchEvent>(c, {
      first: [{ kind: 'resync', data: deps.view.list() }],
      subscribe: (push) => deps.view.subscribe(push),
      write: (stream, event) =>
        stream.writeSSE({ event: event.kind, id: event.data.revision, data: JSON.stringify(event.data) }),
      keepAliveMs: deps.keepAliveMs,
      shutdown: deps.shutdown,
      onSubscribersChanged: () => deps.onSubscribers?.(deps.view.subscriberCount),
    });
  };
}
