// The limits of the listening socket (docs/contract.md §8): at most `maxConnections` open at once (Node
// closes the next one as it comes, and we count it), request headers within 10 s, the whole request
// within 30 s, idle keep-alive connections kept 65 s.
//
// Running out of file descriptors (EMFILE) is logged and counted, never fatal. libuv meets an accept that
// fails with EMFILE by accepting and closing the waiting connections itself, silently, so the process
// would never hear of it; instead the connection limit in force is kept below the process's descriptor
// limit (RLIMIT_NOFILE, read from /proc/self/limits) by a reserve for the store, files and the rest,
// and a connection refused at that limit is counted and logged as `emfile`. Serving resumes as
// connections close. An accept error that does reach Node is logged and counted the same way.
// A request Node's parser refuses gets the contract's error body, with Date (docs/contract.md §11).
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { RequestError } from '@hono/node-server';
import type { Logger } from 'pino';
import { MAX_BODY_BYTES, type ErrorCode } from '../contract/index.js';
import type { ConnectionRefusedReason } from '../metrics/limit-metrics.js';
import { ApiError, errorResponse } from './errors.js';

export interface ConnectionLimits {
  maxConnections: number;
  /** From the connection (or the end of the last response) to the end of the request headers. */
  headersTimeoutMs: number;
  /** From the connection to the end of the request body. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept. */
  keepAliveTimeoutMs: number;
}

/** The longest request target taken (RFC 9112 §3 asks for at least 8,000 octets); a longer one is 414. */
export const MAX_TARGET_BYTES = 8192;

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
};

/**
 * Options for http(s).createServer: the timeouts, checked every second (Node's default is every 30 s);
 * Host is checked by the server itself (requestRefusal), so a request without one gets the error body.
 */
export function timeoutOptions(limits: ConnectionLimits) {
  return {
    requireHostHeader: false,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
  };
}

export interface GuardOptions {
  limits: ConnectionLimits;
  logger?: Logger;
  onRefused?: (reason: ConnectionRefusedReason) => void;
}

/** A line when refusals start, then at most one every 10 s with the count since the last one. */
const LOG_EVERY_MS = 10_000;
/** Descriptors kept out of reach of connections: the store's, the files read, the listening socket. */
export const RESERVED_DESCRIPTORS = 64;

/** The soft limit on open file descriptors, where the system tells it (Linux); undefined when unlimited or unknown. */
export function descriptorLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/** Apply the limits to a listening server; call once it listens (errors before that are the caller's). */
export function guardServer(server: Server, options: GuardOptions): void {
  const { limits, logger, onRefused } = options;
  const descriptors = descriptorLimit();
  const byDescriptors = descriptors === undefined ? Infinity : Math.max(1, descriptors - RESERVED_DESCRIPTORS);
  const dropReason: ConnectionRefusedReason = byDescriptors < limits.maxConnections ? 'emfile' : 'max_connections';
  server.maxConnections = Math.min(limits.maxConnections, byDescriptors);
  if (dropReason === 'emfile') {
    logger?.warn(
      { max_connections: limits.maxConnections, descriptor_limit: descriptors, connections_limit: server.maxConnections },
      'the file descriptor limit allows fewer connections than --max-connections: connections past connections_limit are refused (raise ulimit -n)',
    );
  }
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;

  const refusals = { max_connections: throttled(), emfile: throttled() };
  server.on('drop', () => {
    onRefused?.(dropReason);
    refusals[dropReason].note((count) =>
      dropReason === 'max_connections'
        ? logger?.warn({ reason: dropReason, max_connections: limits.maxConnections, refused: count }, 'connection refused: --max-connections connections are open')
        : logger?.warn(
            { reason: dropReason, descriptor_limit: descriptors, connections_limit: server.maxConnections, refused: count },
            'connection refused: out of file descriptors; serving resumes as connections close',
          ),
    );
  });
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EMFILE' || error.code === 'ENFILE') {
      onRefused?.('emfile');
      refusals.emfile.note((count) =>
        logger?.warn(
          { reason: 'emfile', code: error.code, refused: count },
          'connection refused: out of file descriptors; serving resumes as connections close',
        ),
      );
      return;
    }
    logger?.error({ code: error.code, reason: error.message }, 'accepting a connection failed');
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => refuseRequest(error, socket));
}

function throttled() {
  let lastAt = -Infinity;
  let pending = 0;
  return {
    note(log: (count: number) => void) {
      pending += 1;
      const now = Date.now();
      if (now - lastAt < LOG_EVERY_MS) return;
      lastAt = now;
      log(pending);
      pending = 0;
    },
  };
}

/** For @hono/node-server: a request it cannot read is a 400 with the error body; anything else a defect. */
export function requestErrorHandler(logger: Logger | undefined): (error: unknown) => Response {
  return (error) => {
    if (error instanceof RequestError) return errorResponse(400, 'bad_request', `the request cannot be read: ${error.message}`);
    logger?.error({ err: error }, 'request failed');
    return errorResponse(500, 'internal', 'internal error');
  };
}

/** What Node's parser refused, answered with the contract's error body (docs/contract.md §5, §11). */
function refuseRequest(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message]: [number, string, ErrorCode, string] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'request_timeout', 'the request was not received in time']
      : error.code === 'HPE_HEADER_OVERFLOW' && targetTooLong(error.rawPacket)
        ? [414, 'URI Too Long', 'uri_too_long', TARGET_MESSAGE]
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request headers are too large']
          : [400, 'Bad Request', 'bad_request', 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify({ error: { code, message } satisfies { code: ErrorCode; message: string } });
  // As Node does by default: answer only when nothing of a response was written yet, then close.
  if (socket.bytesWritten === 0) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nDate: ${new Date().toUTCString()}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

const TARGET_MESSAGE = `the request target is longer than ${MAX_TARGET_BYTES} bytes`;

/** The head that overflowed the parser holds a request line past the target limit (or no line end at all). */
function targetTooLong(rawPacket: Buffer | undefined): boolean {
  if (rawPacket === undefined) return false;
  const lineEnd = rawPacket.indexOf('\r\n');
  return lineEnd === -1 ? rawPacket.length > MAX_TARGET_BYTES : lineEnd > MAX_TARGET_BYTES;
}

/**
 * What the parser lets through but HTTP/1.1 does not (RFC 9112 §3.2, §3): no Host on HTTP/1.1, two Host
 * headers, a request target past MAX_TARGET_BYTES. Undefined when the request may go on.
 */
export function requestRefusal(req: IncomingMessage): ApiError | undefined {
  if ((req.url?.length ?? 0) > MAX_TARGET_BYTES) return new ApiError(414, 'uri_too_long', TARGET_MESSAGE);
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts += 1;
  if (hosts > 1) return new ApiError(400, 'bad_request', 'the request has more than one Host header');
  if (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) return new ApiError(400, 'bad_request', 'an HTTP/1.1 request needs a Host header');
  return undefined;
}

/** A refusal written on Node's own response, before any route; the connection closes after it. */
export function refuseOnNode(res: ServerResponse, error: ApiError): void {
  const body = JSON.stringify(error.body());
  res.writeHead(error.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/**
 * Expect (RFC 9110 §10.1.1) on Node's server: an expectation other than 100-continue is 417 with the error
 * body; 100-continue is answered only for a declared body within the limit, so a larger one gets its 413
 * (or its 401) without the client sending it. `dispatch` is the server's request listener.
 */
export function handleExpect(server: Server, dispatch: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
    refuseOnNode(res, new ApiError(417, 'expectation_failed', 'the only expectation taken is Expect: 100-continue')),
  );
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
      // The route answers without reading the body, which the client then never sends: close after it.
      res.setHeader('connection', 'close');
    } else {
      res.writeContinue();
    }
    dispatch(req, res);
  });
}
