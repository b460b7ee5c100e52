// Who may call what (docs/contract.md §8). With `--auth-token-file`, `POST /pools` and `POST /routers` need one of its tokens;
// with `--read-token-file`, every other route but the probes (`/livez`, `/healthz`, `/readyz`) needs a read token or a
// write token. Hono's bearerAuth reads the header; the tokens are compared by TokenSet, in constant time,
// against what the token files hold now (their watcher replaces them). Every refusal is in the contract's
// error body: 401 without a valid token, and 403 insufficient_scope for a read token on a write
// (docs/contract.md §11, RFC 6750 §3.1). What a write token may write (its scopes) is checked by the route
// once it knows the target (write-authority.ts): the guard notes which token it was.
import { bearerAuth } from 'hono/bearer-auth';
import type { Context, MiddlewareHandler } from 'hono';
import type { CertificateScopes } from './certificate-scopes.js';
import { errorResponse } from './errors.js';
import { TokenSet } from './tokens.js';
import { noteWriteToken } from './write-authority.js';

export { readTokenFileText, TokenSet } from './tokens.js';

/** The write routes: a PoolRelay's heartbeat and a router's (docs/contract.md §10); everything else reads. */
export const WRITE_ROUTES = new Set(['/pools', '/routers']);

/** Routes a Kubernetes probe calls without credentials: never guarded. */
const PROBES = new Set(['/livez', '/healthz', '/readyz']);

export interface AccessGuardOptions {
  /** Tokens for `POST /pools` (and for reads); undefined: writes are open. */
  write?: TokenSet;
  /** Tokens for every route but `POST /pools` and the probes; undefined: reads are open. */
  read?: TokenSet;
  /** `--tls-client-scopes-file`: what each client certificate may write (checked by the route, not here). */
  certificateScopes?: CertificateScopes;
  /** Called when a write (`POST /pools`, `POST /routers`) is refused, with its path (counted as a heartbeat outcome). */
  onWriteRefused?: (path: string) => void;
}

/** One middleware for the whole app: picks the guard a request needs, or none. */
export function accessGuard(options: AccessGuardOptions): MiddlewareHandler {
  const { write, read } = options;
  const writeGuard = write && tokenAuth((token, c) => verifyWriteToken(write, token, c));
  const readGuard =
    read &&
    tokenAuth((token) => {
      // Both compared every time, so the time taken does not tell a read token from a write token.
      const asRead = read.matches(token);
      const asWrite = write?.matches(token) ?? false;
      return asRead || asWrite;
    });
  return async function guard(c, next) {
    if (c.req.method === 'POST' && WRITE_ROUTES.has(c.req.path)) {
      if (!writeGuard) return next();
      // A token that reads but cannot write is authenticated all the same: 403, not 401 (RFC 6750 §3.1).
      if (read && isReadOnly(c.req.header('authorization'), read, write)) {
        options.onWriteRefused?.(c.req.path);
        return insufficientScope(c.req.path);
      }
      try {
        return await writeGuard(c, next);
      } catch (error) {
        options.onWriteRefused?.(c.req.path);
        throw error;
      }
    }
    if (!readGuard || PROBES.has(c.req.path)) return next();
    return readGuard(c, next);
  };
}

const REALM = 'poolscope';
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i;

/** The header's token is a read token and not a write token (both compared, in constant time). */
function isReadOnly(header: string | undefined, read: TokenSet, write: TokenSet): boolean {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  if (token === undefined) return false;
  const asRead = read.matches(token);
  const asWrite = write.matches(token);
  return asRead && !asWrite;
}

function insufficientScope(path: string): Response {
  const response = errorResponse(403, 'insufficient_scope', `this token may read but not write: POST ${path} needs a write token`);
  response.headers.set('www-authenticate', `Bearer realm="${REALM}", error="insufficient_scope"`);
  return response;
}

/** A write token, compared in constant time; the one that matched is noted for the route's scope check. */
function verifyWriteToken(write: TokenSet, token: string, c: Context): boolean {
  const match = write.find(token);
  if (match === undefined) return false;
  noteWriteToken(c, match);
  return true;
}

function tokenAuth(verify: (token: string, c: Context) => boolean): MiddlewareHandler {
  const refuse = (message: string) => () => errorResponse(401, 'unauthorized', message);
  return bearerAuth({
    realm: REALM,
    verifyToken: (token, c) => verify(token, c),
    noAuthenticationHeader: { message: refuse('a bearer token is required (Authorization: Bearer <token>)') },
    invalidAuthenticationHeader: {
      message: refuse('the Authorization header must be "Bearer <token>"'),
      // Another scheme (Basic, …) carries no bearer credentials at all: a challenge without an error code
      // (RFC 6750 §3.1); a Bearer header that holds no token is invalid_request.
      wwwAuthenticateHeader: (c) =>
        /^bearer(\s|$)/i.test(c.req.header('authorization') ?? '') ? `Bearer realm="${REALM}", error="invalid_request"` : `Bearer realm="${REALM}"`,
    },
    invalidToken: { message: refuse('the bearer token is not valid'), wwwAuthenticateHeader: `Bearer realm="${REALM}", error="invalid_token"` },
  });
}
