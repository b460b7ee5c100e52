// Who may call what (docs/contract.md §8). With `--auth-token-file`, `POST /pools` needs one of its tokens;
// with `--read-token-file`, every other route but the probes (`/healthz`, `/readyz`) needs a read token or a
// write token. Hono's bearerAuth reads the header; the tokens are compared by TokenSet, in constant time,
// against what the token files hold now (their watcher replaces them). Every refusal is a 401 in the
// contract's error body.
import { bearerAuth } from 'hono/bearer-auth';
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors.js';
import { TokenSet } from './tokens.js';

export { parseTokenFile, readTokenFileText, TokenSet } from './tokens.js';

/** Routes a Kubernetes probe calls without credentials: never guarded. */
const PROBES = new Set(['/healthz', '/readyz']);

export interface AccessGuardOptions {
  /** Tokens for `POST /pools` (and for reads); undefined: writes are open. */
  write?: TokenSet;
  /** Tokens for every route but `POST /pools` and the probes; undefined: reads are open. */
  read?: TokenSet;
  /** Called when a `POST /pools` is refused (counted as a heartbeat outcome). */
  onWriteRefused?: () => void;
}

/** One middleware for the whole app: picks the guard a request needs, or none. */
export function accessGuard(options: AccessGuardOptions): MiddlewareHandler {
  const { write, read } = options;
  const writeGuard = write && tokenAuth((token) => write.matches(token));
  const readGuard =
    read &&
    tokenAuth((token) => {
      // Both compared every time, so the time taken does not tell a read token from a write token.
      const asRead = read.matches(token);
      const asWrite = write?.matches(token) ?? false;
      return asRead || asWrite;
    });
  return async function guard(c, next) {
    if (c.req.method === 'POST' && c.req.path === '/pools') {
      if (!writeGuard) return next();
      try {
        return await writeGuard(c, next);
      } catch (error) {
        options.onWriteRefused?.();
        throw error;
      }
    }
    if (!readGuard || PROBES.has(c.req.path)) return next();
    return readGuard(c, next);
  };
}

function tokenAuth(verify: (token: string) => boolean): MiddlewareHandler {
  const refuse = (message: string) => () => errorResponse(401, 'unauthorized', message);
  return bearerAuth({
    verifyToken: (token) => verify(token),
    noAuthenticationHeader: { message: refuse('a bearer token is required (Authorization: Bearer <token>)') },
    invalidAuthenticationHeader: { message: refuse('the Authorization header must be "Bearer <token>"') },
    invalidToken: { message: refuse('the bearer token is not valid') },
  });
}
