// What every Server-Sent Events stream of the service does the same way, so that a standard EventSource
// (the browser's, the `eventsource` package) and a generated fetch-based client behave (docs/contract.md
// §11). GET /pools/watch (watch-hub.ts) and the /debug feed (queued-sse.ts) both use it; so does any
// stream added later.
//   - Every stream starts with `retry:`, the reconnection delay a standard client then uses.
//   - An end the server chooses is said in a last event: `closing` when the replica drains, `overloaded`
//     when a watcher is refused (then a standard client retries after the `retry:` of the back-off).
//   - A stream that ends without one of those was cut. On HTTP/1.1 the stream is also chunked, so a cut
//     connection is an incomplete message to any HTTP client, while an end the server chose is complete.
import type { Context } from 'hono';
import { ApiError } from './errors.js';

/** The reconnection delay every stream asks for at its start (ms). */
export const STREAM_RETRY_MS = 1000;

const encoder = new TextEncoder();

/** `retry: <ms>` as its own block: it sets the delay and dispatches nothing. */
export function retryFrame(ms: number): Uint8Array {
  return encoder.encode(`retry: ${Math.round(ms)}\n\n`);
}

export const STREAM_RETRY_FRAME = retryFrame(STREAM_RETRY_MS);

/** The last event of every stream when the replica drains. */
export const CLOSING_FRAME = encoder.encode(`event: closing\ndata: ${JSON.stringify({ reason: 'the replica is shutting down' })}\n\n`);

/**
 * An SSE frame as one HTTP/1.1 chunk: `<size in hex>\r\n<bytes>\r\n`. A stream fanned out to many
 * clients frames each event once, so every stream writes the very same bytes in one write.
 */
export function chunkOf(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const part of parts) size += part.byteLength;
  const head = encoder.encode(`${size.toString(16)}\r\n`);
  const chunk = new Uint8Array(head.byteLength + size + 2);
  chunk.set(head, 0);
  let at = head.byteLength;
  for (const part of parts) {
    chunk.set(part, at);
    at += part.byteLength;
  }
  chunk[at] = 13;
  chunk[at + 1] = 10;
  return chunk;
}

/** The SSE bytes of one or more whole chunks (for a connection without chunks): no copy for one chunk. */
export function unchunk(bytes: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    let lineEnd = at;
    while (bytes[lineEnd] !== 13) lineEnd += 1;
    const size = parseInt(String.fromCharCode(...bytes.subarray(at, lineEnd)), 16);
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** Whether the request's Accept names text/event-stream (at a quality above 0): a standard SSE client. */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((part) => {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (params.some((p) => /^q\s*=\s*0(\.0*)?$/.test(p))) return false;
    return range === 'text/event-stream';
  });
}

export interface Refusal {
  /** What to wait before trying again, in seconds (Retry-After; `retry:` in ms for SSE clients). */
  retryAfterSecs: number;
  error: ApiError;
}

/**
 * A watcher refused (`--max-watchers`): to an SSE client, `200` with `retry:` the back-off, an
 * `overloaded` event holding the error body, and the end, so a standard EventSource comes back by itself
 * after the back-off (it would give up for good on a 503); to anyone else, the 503 with Retry-After.
 */
export function refuseWatcher(c: Context, refusal: Refusal): Response {
  const { error, retryAfterSecs } = refusal;
  if (acceptsEventStream(c.req.header('accept'))) {
    const body = `retry: ${retryAfterSecs * 1000}\nevent: overloaded\ndata: ${JSON.stringify(error.body())}\n\n`;
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
  }
  return c.json(error.body(), error.status, { 'retry-after': String(retryAfterSecs) });
}
