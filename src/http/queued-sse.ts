// A Server-Sent Events response fed by a subscription: events are queued synchronously as the source
// publishes them and written in order by one loop, so a slow client never reorders or loses an event
// (it only delays its own stream). Comment lines keep the connection alive; the stream ends when the
// client goes away or the server drains. A HEAD request gets the stream's headers and subscribes nothing.
// (GET /pools/watch has its own fan-out, watch-hub.ts; this serves the /debug feed.)
import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { SSE_HEADERS } from './watch-sink.js';

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

/**
 * One 'abort' listener per shutdown signal, however many streams wait on it: a listener per stream would
 * pass Node's limit of ten on one EventTarget and print MaxListenersExceededWarning.
 */
const onShutdown = new WeakMap<AbortSignal, Set<() => void>>();

function whenShutdown(signal: AbortSignal, end: () => void): () => void {
  let ends = onShutdown.get(signal);
  if (!ends) {
    const set = new Set<() => void>();
    ends = set;
    onShutdown.set(signal, set);
    signal.addEventListener('abort', () => [...set].forEach((f) => f()), { once: true });
  }
  ends.add(end);
  return () => ends.delete(end);
}

export function queuedSse<E>(c: Context, options: QueuedSseOptions<E>): Response {
  if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: SSE_HEADERS });
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
    const forget = options.shutdown ? whenShutdown(options.shutdown, end) : undefined;
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
      forget?.();
      unsubscribe();
      options.onSubscribersChanged?.();
    }
  });
}
