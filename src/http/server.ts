// Listening and draining: the only place a socket is opened. TLS when a certificate is configured. The
// connection limits and timeouts of docs/contract.md §8 are in connection-limits.ts.
import { createServer as createHttpsServer } from 'node:https';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { nodeFastPathOf } from './app.js';
import type { Logger } from 'pino';
import {
  DEFAULT_CONNECTION_LIMITS,
  guardServer,
  handleExpect,
  refuseOnNode,
  requestErrorHandler,
  requestRefusal,
  timeoutOptions,
  type ConnectionLimits,
  type GuardOptions,
} from './connection-limits.js';

export interface ListenOptions {
  app: Hono;
  host: string;
  port: number;
  /** HTTPS; with `clientCaPath`, mutual TLS: a client certificate signed by that CA on every connection (docs/contract.md §8). */
  tls?: { certPath: string; keyPath: string; clientCaPath?: string };
  /** Default: DEFAULT_CONNECTION_LIMITS (`--max-connections` sets `maxConnections`). */
  limits?: Partial<ConnectionLimits>;
  /** Where refused connections and accept errors are logged. */
  logger?: Logger;
  onConnectionRefused?: GuardOptions['onRefused'];
}

export interface RunningServer {
  /** The address actually bound (port 0 picks a free one). */
  address: AddressInfo;
  url: string;
  /** Stop accepting; close idle connections at once and the rest after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

export async function listen(options: ListenOptions): Promise<RunningServer> {
  const tls = options.tls
    ? {
        createServer: createHttpsServer,
        serverOptions: {
          cert: await readFile(options.tls.certPath),
          key: await readFile(options.tls.keyPath),
          ...(options.tls.clientCaPath === undefined
            ? {}
            : { ca: await readFile(options.tls.clientCaPath), requestCert: true, rejectUnauthorized: true }),
        },
      }
    : {};
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  const serverOptions = { ...timeoutOptions(limits), ...('serverOptions' in tls ? tls.serverOptions : {}) };
  // @hono/node-server's listener, with an error handler: a request it cannot turn into a Request (a Host
  // header that is no host) gets the contract's error body instead of a bare 400.
  const honoListener = getRequestListener(options.app.fetch, { hostname: options.host, errorHandler: requestErrorHandler(options.logger) });
  // Heartbeats first, on Node's own request and response, when the app has that fast path (app.ts).
  // Before either, what HTTP/1.1 refuses and Node's parser lets through (Host, the target's length).
  const fast = nodeFastPathOf(options.app);
  // The listener answers every error it meets (its errorHandler); one that still escapes is logged and the
  // response cut, never left as an unhandled rejection.
  const serveWithHono = (req: IncomingMessage, res: ServerResponse) => {
    Promise.resolve(honoListener(req, res)).catch((error: unknown) => {
      options.logger?.error({ err: error, method: req.method, path: req.url }, 'request failed');
      res.destroy();
    });
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const refusal = requestRefusal(req);
    if (refusal !== undefined) return refuseOnNode(res, refusal);
    if (!fast?.(req, res)) serveWithHono(req, res);
  };
  const create = ('createServer' in tls ? tls.createServer : createHttpServer) as typeof createHttpServer;
  const server = await new Promise<Server>((resolve, reject) => {
    const s = create(serverOptions, listener);
    s.once('error', reject);
    s.listen(options.port, options.host, () => {
      s.off('error', reject);
      resolve(s);
    });
  });
  guardServer(server, { limits, logger: options.logger, onRefused: options.onConnectionRefused });
  handleExpect(server, listener);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    address,
    url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    close: (graceMs = 5000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
