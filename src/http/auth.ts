// Bearer tokens for POST /pools (--auth-token-file): Hono's bearerAuth (constant-time comparison), with
// every refusal a 401 in the contract's error body.
import { bearerAuth } from 'hono/bearer-auth';
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors.js';

export interface TokenAuthOptions {
  tokens: readonly string[];
}

export function tokenAuth(options: TokenAuthOptions): MiddlewareHandler {
  const refuse = (message: string) => () => errorResponse(401, 'unauthorized', message);
  return bearerAuth({
    token: [...options.tokens],
    noAuthenticationHeader: { message: refuse('a bearer token is required (Authorization: Bearer <token>)') },
    invalidAuthenticationHeader: { message: refuse('the Authorization header must be "Bearer <token>"') },
    invalidToken: { message: refuse('the bearer token is not valid') },
  });
}

/** Tokens from a file: one a line; blank lines and lines starting with '#' are skipped. */
export function parseTokenFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
