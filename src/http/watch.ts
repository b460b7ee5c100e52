// GET /pools/watch: Server-Sent Events. First a `resync` (the body of GET /pools), then `upsert` and
// `delete` per change, and a new `resync` whenever completeness changes or a source relists. A comment
// line keeps the connection alive at least every `keepAliveMs`.
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { WatchEvent } from '../contract/index.js';
import type { ListedView } from '../join/listed-view.js';

type Outgoing = WatchEvent | { kind: 'keepalive' };
const KEEPALIVE: Outgoing = { kind: 'keepalive' };

export interface WatchDeps {
  view: ListedView;
  keepAliveMs: number;
  onSubscribers?: (count: number) => void;
  /** Aborted when the server drains: every stream ends so connections can close. */
  shutdown?: AbortSignal;
}

export function watchHandler(deps: WatchDeps) {
  return function watch(c: Context): Response {
    return streamSSE(c, async (stream) => {
      // Events are queued synchronously as the view publishes them and written in order by one loop,
      // so a slow client never reorders or loses a change (it only delays its own stream).
      const queue: Outgoing[] = [{ kind: 'resync', data: deps.view.list() }];
      let wake: (() => void) | undefined;
      const unsubscribe = deps.view.subscribe((event) => {
        queue.push(event);
        wake?.();
      });
      deps.onSubscribers?.(deps.view.subscriberCount);
      const keepAlive = setInterval(() => {
        queue.push(KEEPALIVE);
        wake?.();
      }, deps.keepAliveMs);
      let closed = false;
      const end = () => {
        closed = true;
        wake?.();
      };
      stream.onAbort(end);
      if (deps.shutdown?.aborted) end();
      deps.shutdown?.addEventListener('abort', end, { once: true });
      try {
        while (!closed) {
          const event = queue.shift();
          if (!event) {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
            continue;
          }
          if (event.kind === 'keepalive') {
            await stream.write(': keep-alive\n\n');
            continue;
          }
          await stream.writeSSE({ event: event.kind, id: event.data.revision, data: JSON.stringify(event.data) });
        }
      } finally {
        clearInterval(keepAlive);
        deps.shutdown?.removeEventListener('abort', end);
        unsubscribe();
        deps.onSubscribers?.(deps.view.subscriberCount);
      }
    });
  };
}
