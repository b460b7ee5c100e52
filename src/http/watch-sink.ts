// Where a watch stream's bytes go. Writing never waits: a frame is handed over at once and what the
// client has not taken yet is the stream's backlog, which the hub compares with its limit
// (docs/contract.md §8). Over a socket the frames go straight into the socket (its buffer is the queue,
// and it holds the very frames every other stream holds: nothing is copied per stream); on HTTP/1.1
// each frame is one chunk, so an end the server chooses is a complete message and a cut connection is
// not (docs/contract.md §11). Without a socket (`app.request()`), into a ReadableStream that counts its
// queued bytes the same way.
import { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { unchunk } from './sse.js';

export interface WatchSink {
  /** One or more whole HTTP/1.1 chunks of SSE bytes (sse.ts chunkOf): the hub frames each event once. */
  write(frame: Uint8Array): void;
  /** Bytes written but not yet taken by the client. */
  readonly backlogBytes: number;
  /** Where the client is, for log lines. */
  readonly peer: string | undefined;
  /** Called once when the stream is gone (the client left, or end/destroy). */
  onClose(listener: () => void): void;
  /** Finish the stream cleanly (the server drains), after `last` if given. */
  end(last?: Uint8Array): void;
  /** Cut the connection at once, dropping whatever is unsent. */
  destroy(): void;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

/** A sink on the request's own Node response, and what the handler returns; undefined off a Node server. */
export function nodeSink(c: Context): { sink: WatchSink; response: Response } | undefined {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  if (!(outgoing instanceof ServerResponse)) return undefined;
  const res: ServerResponse = outgoing;
  const socket = res.socket;
  if (socket === null) return undefined;
  // Each frame is written straight to the socket, not through the response's write. On HTTP/1.1 each is
  // one chunk as the hub framed it (one write, the same bytes for every stream) and Node's end() writes
  // the last chunk; the connection stays open after it, as for any
  // reply (with `Connection: close` clients such as undici take the end of the connection for the end of
  // the reply, chunks or not). HTTP/1.0 has no chunks: there the stream is the rest of the connection.
  const chunked = res.req.httpVersionMajor === 1 && res.req.httpVersionMinor >= 1;
  // (Node says keep-alive only for a reply it may chunk; without, it adds Connection: close.)
  res.useChunkedEncodingByDefault = chunked;
  const { connection: _keepAlive, ...headers } = SSE_HEADERS;
  res.writeHead(200, chunked ? { ...headers, 'transfer-encoding': 'chunked' } : headers);
  res.flushHeaders();
  // Errors of the socket end the stream through 'close'; none may go unhandled.
  res.on('error', () => {});
  const write = (frame: Uint8Array) => {
    if (!socket.destroyed && !res.writableEnded) socket.write(chunked ? frame : unchunk(frame));
  };
  const sink: WatchSink = {
    write,
    get backlogBytes() {
      return socket.writableLength;
    },
    peer: socket.remoteAddress !== undefined ? `${socket.remoteAddress}:${socket.remotePort}` : undefined,
    onClose: (listener) => {
      if (res.destroyed) queueMicrotask(listener);
      else res.once('close', listener);
    },
    end: (last) => {
      if (last) write(last);
      res.end();
    },
    destroy: () => res.destroy(),
  };
  // Tells @hono/node-server the response is written already. This very object: a Response built here would
  // be the server's own lightweight kind, which it writes out (headers again) instead of checking the mark.
  return { sink, response: RESPONSE_ALREADY_SENT };
}

/** A sink read through a web ReadableStream (`app.request()`, or any non-Node runtime). */
export function streamSink(): { sink: WatchSink; response: Response } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const listeners: (() => void)[] = [];
  const close = () => {
    if (closed) return;
    closed = true;
    for (const listener of listeners.splice(0)) listener();
  };
  // High-water mark 0: desiredSize is minus the bytes queued, which is exactly the backlog (`0 - desiredSize`,
  // not `-desiredSize`: nothing queued is 0, never -0).
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => {
        controller = c;
      },
      cancel: close,
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );
  const sink: WatchSink = {
    write: (frame) => {
      if (!closed) controller.enqueue(unchunk(frame));
    },
    get backlogBytes() {
      return closed ? 0 : 0 - (controller.desiredSize ?? 0);
    },
    peer: undefined,
    onClose: (listener) => {
      if (closed) queueMicrotask(listener);
      else listeners.push(listener);
    },
    end: (last) => {
      if (closed) return;
      if (last) controller.enqueue(unchunk(last));
      controller.close();
      close();
    },
    destroy: () => {
      if (closed) return;
      controller.error(new Error('watch stream dropped'));
      close();
    },
  };
  return { sink, response: new Response(stream, { status: 200, headers: SSE_HEADERS }) };
}
