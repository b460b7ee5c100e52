// A Server-Sent Events response fed by a subscription (the /debug feed; GET /pools/watch has its own
// fan-out, watch-hub.ts), under the limits every stream obeys (stream-gate.ts) and speaking SSE as every
// stream does (sse.ts): a `retry:` first, then each event framed as the source publishes it and handed to
// the stream's sink at once, in order, so a client that reads slowly delays only its own stream, and one
// that stops reading is cut once its unsent backlog passes the limit (plus its first frames). Comment lines
// keep the connection alive; the stream ends when the client goes away, or with a `closing` event when the
// server drains. A HEAD request gets the stream's headers and subscribes nothing.
import type { Context } from 'hono';
import { chunkOf, CLOSING_FRAME, STREAM_RETRY_FRAME } from './sse.js';
import type { StreamGate } from './stream-gate.js';
import { nodeSink, SSE_HEADERS, streamSink } from './watch-sink.js';

export interface SubscriptionSseOptions<E> {
  /** Written before anything the subscription delivers (e.g. a snapshot); not asked of a refused stream. */
  first(): E[];
  /** Start delivering events; returns the unsubscribe function. */
  subscribe(push: (event: E) => void): () => void;
  /** The SSE frame of one event. */
  frame(event: E): Uint8Array;
  keepAliveMs: number;
  /** The streams of this kind, against the limits. */
  gate: StreamGate;
  /** Aborted when the server drains: the stream ends so its connection can close. */
  shutdown?: AbortSignal;
}

const encoder = new TextEncoder();
// Every write is one HTTP/1.1 chunk (watch-sink.ts).
const KEEPALIVE = chunkOf([encoder.encode(': keep-alive\n\n')]);
const CLOSING = chunkOf([CLOSING_FRAME]);

/** One SSE frame without an id: `event:` the kind, `data:` one line of JSON. */
export function namedFrame(kind: string, json: string): Uint8Array {
  return encoder.encode(`event: ${kind}\ndata: ${json}\n\n`);
}

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

export function subscriptionSse<E>(c: Context, options: SubscriptionSseOptions<E>): Response {
  if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: SSE_HEADERS });
  const { gate } = options;
  if (gate.full) return gate.refuse(c);
  const { sink, response } = nodeSink(c) ?? streamSink();
  if (options.shutdown?.aborted) {
    sink.end(chunkOf([STREAM_RETRY_FRAME, CLOSING_FRAME]));
    return response;
  }
  gate.admit(sink);
  // The first frames (a snapshot of every pool) may be large: they are allowed in flight on top of the limit.
  const first = chunkOf([STREAM_RETRY_FRAME, ...options.first().map((event) => options.frame(event))]);
  const allowance = first.byteLength;
  if (!gate.write(sink, first, allowance)) return response;
  const unsubscribe = options.subscribe((event) => gate.write(sink, chunkOf([options.frame(event)]), allowance));
  const keepAlive = setInterval(() => gate.write(sink, KEEPALIVE, allowance), options.keepAliveMs);
  keepAlive.unref();
  const forget = options.shutdown ? whenShutdown(options.shutdown, () => sink.end(CLOSING)) : undefined;
  sink.onClose(() => {
    clearInterval(keepAlive);
    forget?.();
    unsubscribe();
  });
  return response;
}
