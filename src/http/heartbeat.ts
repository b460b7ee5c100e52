// POST /pools: a PoolRelay's heartbeat. Checks run in the order a client can fix them: type, size,
// JSON, fields; only a request that passes every check reaches the store, so a refusal changes nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import type { Logger } from 'pino';
import {
  describeIssue,
  MAX_BODY_BYTES,
  poolKey,
  readRegistration,
  registrationSchema,
  type HeartbeatReply,
  type PoolKey,
  type Registration,
} from '../contract/index.js';
import { canonicalJson } from '../store/canonical-json.js';
import type { HeartbeatOutcome } from '../metrics/metrics.js';
import { StoreUnavailableError, type RegistrationStore } from '../store/types.js';
import { ApiError } from './errors.js';
import { poolTarget } from './scopes.js';
import type { WriteAuthority } from './write-authority.js';

export interface HeartbeatDeps {
  store: RegistrationStore;
  leaseMs: number;
  heartbeatIntervalMs: number;
  onOutcome?: (outcome: HeartbeatOutcome) => void;
  logger?: Logger;
  /** With write tokens or client certificate scopes: whether the request's credentials may write the pool. */
  writes?: WriteAuthority;
  /**
   * With regions: the highest version of the pool's registration this replica knows in any region, so a
   * content change written here is ordered after every change it saw (docs/contract.md §7).
   */
  knownVersion?: (key: PoolKey) => number;
}

/**
 * JSON media types. `application/x-www-form-urlencoded` is taken as JSON too: it is what `curl -d` labels
 * every body with, and the body is still parsed strictly as JSON (a real form is refused as invalid_json).
 */
export function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  // What every PoolRelay sends, without splitting the header.
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, a shortcut: the general rule below takes the same type
  if (contentType === 'application/json') return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || JSON_SUFFIX_TYPE.test(type) || type === 'application/x-www-form-urlencoded';
}

const JSON_SUFFIX_TYPE = /^application\/[\w.+-]+\+json$/;

/** A Content-Encoding other than identity: a coding this server does not decode (RFC 9110 §8.4, §15.5.16). */
export function isEncoded(contentEncoding: string | undefined): boolean {
  return contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity';
}

/** The content types the document lists for a heartbeat (any application/*+json is taken as JSON too). */
export const JSON_CONTENT_TYPES = ['application/json', 'application/x-www-form-urlencoded'] as const;

/** The client left before its body was complete: the read of the body failed, or the request was aborted. */
export function clientLeft(c: Context, error: unknown): boolean {
  return !(error instanceof ApiError) && (c.req.raw.signal.aborted || (error as NodeJS.ErrnoException | undefined)?.code === 'ECONNRESET');
}

/**
 * A client that leaves before its body is complete is no defect of ours and nobody reads the reply
 * (docs/operations.md "Failure modes"): one quiet line and a count, not a 500 with a stack.
 */
export function bodyAborted(deps: Pick<HeartbeatDeps, 'onOutcome' | 'logger'>, c: Context, error: unknown): ApiError {
  deps.onOutcome?.('aborted');
  deps.logger?.debug({ method: c.req.method, path: c.req.path, reason: (error as Error).message }, 'request body aborted by the client');
  return new ApiError(400, 'invalid_json', 'the body ended before it was complete');
}

export function heartbeatHandler(deps: HeartbeatDeps) {
  return async function heartbeat(c: Context): Promise<Response> {
    if (!isJsonType(c.req.header('content-type'))) {
      deps.onOutcome?.('invalid');
      throw new ApiError(415, 'unsupported_media_type', 'the body must be JSON (Content-Type: application/json)');
    }
    if (isEncoded(c.req.header('content-encoding'))) {
      deps.onOutcome?.('invalid');
      throw new ApiError(415, 'unsupported_media_type', 'the body must not be encoded (no Content-Encoding: send plain JSON)');
    }
    let text: string;
    try {
      text = await c.req.text();
    } catch (error) {
      throw bodyAborted(deps, c, error);
    }
    const { writes } = deps;
    return c.json(await acceptHeartbeat(deps, text, writes && ((registration) => writes.authorize(c, poolTarget(registration)))));
  };
}

/**
 * What follows the read of a JSON body: the JSON, the registration's rules, the credentials' scopes
 * (`authorize`, which throws `403 forbidden`), the store. Throws the contract's ApiError for a refusal
 * (counted as `invalid`, `forbidden` or `unavailable`); counts `ok` and returns the reply otherwise.
 */
async function acceptHeartbeat(deps: HeartbeatDeps, text: string, authorize?: (registration: Registration) => void): Promise<HeartbeatReply> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    deps.onOutcome?.('invalid');
    throw new ApiError(400, 'invalid_json', `the body is not valid JSON: ${(error as Error).message}`);
  }
  // One walk checks a valid body and writes its canonical JSON; any other body goes to the schema,
  // which names the field and the rule (registration-reader.ts).
  let registration: Registration;
  let json: string;
  const read = readRegistration(body);
  // Stryker disable next-line ConditionalExpression: equivalent, a shortcut: the schema takes every body the reader takes, to the same registration and canonical JSON (test/contract)
  if (read) {
    ({ registration, json } = read);
  } else {
    const parsed = registrationSchema.safeParse(body);
    if (!parsed.success) {
      deps.onOutcome?.('invalid');
      const { code, field, message } = describeIssue(parsed.error.issues);
      throw new ApiError(400, code, message, field);
    }
    registration = parsed.data;
    json = canonicalJson(registration);
  }
  if (authorize) {
    try {
      authorize(registration);
    } catch (error) {
      deps.onOutcome?.('forbidden');
      throw error;
    }
  }
  try {
    await deps.store.heartbeat(registration, json, deps.knownVersion?.(poolKey(registration)));
  } catch (error) {
    if (error instanceof StoreUnavailableError) {
      deps.onOutcome?.('unavailable');
      throw new ApiError(503, 'store_unavailable', `the registration store cannot be reached: ${error.message}`);
    }
    throw error;
  }
  deps.onOutcome?.('ok');
  return { pool: poolKey(registration), lease_ms: deps.leaseMs, heartbeat_interval_ms: deps.heartbeatIntervalMs };
}

/** Decodes a body as @hono/node-server's text() does (UTF-8, a BOM dropped, bad bytes replaced). */
const utf8 = new TextDecoder();
/** A Host header the URL parser surely takes (the request listener refuses one it cannot build a URL from). */
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$/;

function isPlainHost(host: string | undefined): boolean {
  const match = host === undefined ? null : PLAIN_HOST.exec(host);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65_535);
}

/**
 * POST /pools served on Node's request and response, before Hono: the heartbeat is the one request every
 * PoolRelay sends every few seconds, and Hono's request, context, routing and response objects cost
 * about as much CPU as the heartbeat's own work (docs/design.md "Dependencies"). Only the plain case is
 * taken: exactly `POST /pools`, a JSON Content-Type, a Content-Length within the limit, no
 * Transfer-Encoding or Content-Encoding, a plain Host header, and no credentials to check (no write
 * tokens, no client certificate scopes: app.ts builds it only then); every other request (an error to
 * render before the body, a token, a chunked body) goes on to Hono, which answers it as before. Once the
 * body is read, the same checks as the Hono route run (acceptHeartbeat), and a refusal has the same body.
 * Returns whether it took the request.
 */
export function heartbeatFastPath(deps: HeartbeatDeps & { logger: Logger }): (req: IncomingMessage, res: ServerResponse) => boolean {
  const respond = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown) => {
    if (error instanceof ApiError) return respond(res, error.status, error.body());
    // As the app's error renderer does for anything that is not a contract error.
    deps.logger.error({ err: error, method: req.method, path: '/pools' }, 'request failed');
    respond(res, 500, { error: { code: 'internal', message: 'internal error' } });
  };
  return function fastHeartbeat(req, res) {
    if (req.method !== 'POST' || req.url !== '/pools') return false;
    const { headers } = req;
    // Without a Content-Length, NaN: not within the limit. A Transfer-Encoding beside one is refused by Node's
    // parser unless it is the lenient one (`insecureHTTPParser`), which frames the body by the coding.
    if (!(Number(headers['content-length']) <= MAX_BODY_BYTES) || headers['transfer-encoding'] !== undefined) return false;
    if (!isJsonType(headers['content-type']) || !isPlainHost(headers.host) || headers['content-encoding'] !== undefined) return false;
    const chunks: Buffer[] = [];
    let ended = false;
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      ended = true;
      // One chunk, the usual case, decoded without the copy Buffer.concat makes.
      const text = utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      acceptHeartbeat(deps, text).then(
        (reply) => respond(res, 200, reply),
        (error: unknown) => fail(req, res, error),
      );
    });
    // The client left before its body was complete: one quiet line and a count, as the Hono route does. No
    // reply: the socket is gone, or (a client that half-closed) Node's parser has answered it 400 itself.
    req.once('close', () => {
      if (ended) return;
      deps.onOutcome?.('aborted');
      deps.logger.debug({ method: 'POST', path: '/pools', reason: 'aborted' }, 'request body aborted by the client');
    });
    return true;
  };
}
