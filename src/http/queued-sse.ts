// A Server-Sent Events response fed by a subscription: events are queued synchronously as the source
// publishes them and written in order by one loop, so a slow client never reorders or loses an event
// (it only delays its own stream). Comment lines keep the connection alive; the stream ends when the
// client goes away or the server drains.
import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';

export interface QueuedSseOptions<E> {
  /** Written before anything the subscription delivers (e.g. a resync). */
  first: E[];
  /** Start delivering events; returns the unsubscribe function. */
  subscribe(push: (event: E) => void): () => void;
  write(stream: SSEStreamingApi, event: E): Promise<void>;
  keepAliveMs: number;
  /** Aborted when the server drains: the stream ends so its connection can close. */
  shutdown?: AbortSignal;
  /** Called once the subscription is in place, and again when it is gone. */
  onSubscribersChanged?: () => void;
}

const KEEPALIVE = Symbol('keepalive');

export function queuedSse<E>(c: Context, options: QueuedSseOptions<E>): Response {
  return streamSSE(c, async (stream) => {
    const queue: (E | typeof KEEPALIVE)[] = [...options.first];
    let wake: (() => void) | undefined;
    const push = (event: E | typeof KEEPALIVE) => {
      queue.push(event);
      wake?.();
    };
    const unsubscribe = options.subscribe(push);
    options.onSubscribersChanged?.();
    const keepAlive = setInterval(() => push(KEEPALIVE), options.keepAliveMs);
    let closed = false;
    const end = () => {
      closed = true;
      wake?.();
    };
    stream.onAbort(end);
    if (options.shutdown?.aborted) end();
    options.shutdown?.addEventListener('abort', end, { once: true });
    try {
      while (!closed) {
        const event = queue.shift();
        if (event === undefined) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        if (event === KEEPALIVE) await stream.write(': keep-alive\n\n');
        else await options.write(stream, event);
      }
    } finally {
      clearInterval(keepAlive);
      options.shutdown?.removeEventListener('abort', end);
      unsubscribe();
      options.onSubscribersChanged?.();
    }
  });
}
