// POST /pools: a PoolRelay's heartbeat. Checks run in the order a client can fix them: type, size,
// JSON, fields; only a request that passes every check reaches the store, so a refusal changes nothing.
import type { Context } from 'hono';
import type { Logger } from 'pino';
import { describeIssue, poolKey, readRegistration, registrationSchema, type HeartbeatReply, type Registration } from '../contract/index.js';
import { canonicalJson } from '../store/canonical-json.js';
import { StoreUnavailableError, type RegistrationStore } from '../store/types.js';
import { ApiError } from './errors.js';

export interface HeartbeatDeps {
  store: RegistrationStore;
  leaseMs: number;
  heartbeatIntervalMs: number;
  onOutcome?: (outcome: 'ok' | 'invalid' | 'unauthorized' | 'unavailable' | 'aborted') => void;
  logger?: Logger;
}

/**
 * JSON media types. `application/x-www-form-urlencoded` is taken as JSON too: it is what `curl -d` labels
 * every body with, and the body is still parsed strictly as JSON (a real form is refused as invalid_json).
 */
function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  // What every PoolRelay sends, without splitting the header.
  if (contentType === 'application/json') return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || JSON_SUFFIX_TYPE.test(type) || type === 'application/x-www-form-urlencoded';
}

const JSON_SUFFIX_TYPE = /^application\/[\w.+-]+\+json$/;

/** The client left before its body was complete: the read of the body failed, or the request was aborted. */
export function clientLeft(c: Context, error: unknown): boolean {
  return !(error instanceof ApiError) && (c.req.raw.signal.aborted || (error as NodeJS.ErrnoException | undefined)?.code === 'ECONNRESET');
}

/**
 * A client that leaves before its body is complete is no defect of ours and nobody reads the reply
 * (docs/operations.md "Failure modes"): one quiet line and a count, not a 500 with a stack.
 */
export function bodyAborted(deps: HeartbeatDeps, c: Context, error: unknown): ApiError {
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
    let text: string;
    try {
      text = await c.req.text();
    } catch (error) {
      throw bodyAborted(deps, c, error);
    }
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
    try {
      await deps.store.heartbeat(registration, json);
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        deps.onOutcome?.('unavailable');
        throw new ApiError(503, 'store_unavailable', `the registration store cannot be reached: ${error.message}`);
      }
      throw error;
    }
    deps.onOutcome?.('ok');
    const reply: HeartbeatReply = {
      pool: poolKey(registration),
      lease_ms: deps.leaseMs,
      heartbeat_interval_ms: deps.heartbeatIntervalMs,
    };
    return c.json(reply);
  };
}
