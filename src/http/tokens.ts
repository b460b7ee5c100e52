// Bearer tokens (docs/contract.md §8): what a token file may hold, and the set of tokens a guard accepts,
// compared in constant time. A token is never logged, and never named in a refusal (its line number is).
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The characters of a Bearer token (RFC 6750 `b64token`): what an `Authorization: Bearer` header can carry,
 * so what the guard (Hono's bearerAuth) can ever match. A token outside this set could never log in.
 */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export const BEARER_TOKEN_RULE = "a token may hold only letters, digits and - . _ ~ + / (then = padding), the Bearer token characters";

/** A token file's text read: its tokens, or why it cannot be used (no token, a token no header can carry). */
export type TokenFileContent = { ok: true; tokens: string[] } | { ok: false; problem: string };

/** One token a line; blank lines and lines starting with '#' are skipped; surrounding whitespace is trimmed. */
export function readTokenFileText(text: string): TokenFileContent {
  const tokens: string[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (!BEARER_TOKEN.test(line)) return { ok: false, problem: `line ${index + 1}: ${BEARER_TOKEN_RULE}` };
    tokens.push(line);
  }
  if (tokens.length === 0) return { ok: false, problem: 'holds no token (only blank lines and # comments)' };
  return { ok: true, tokens };
}

/** Tokens from a file: one a line; blank lines and lines starting with '#' are skipped (no checks). */
export function parseTokenFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * The tokens a guard accepts now; a token file's watcher replaces them when the file changes. Only their
 * SHA-256 digests are held, and a candidate is compared with every one of them, in constant time, without
 * stopping at the first match: the time taken tells nothing of which token, or how much of one, matched.
 */
export class TokenSet {
  private digests: Buffer[] = [];

  constructor(tokens: readonly string[] = []) {
    this.replace(tokens);
  }

  get size(): number {
    return this.digests.length;
  }

  replace(tokens: readonly string[]): void {
    this.digests = [...new Set(tokens)].map(digest);
  }

  matches(candidate: string): boolean {
    const wanted = digest(candidate);
    let found = false;
    for (const held of this.digests) found = timingSafeEqual(held, wanted) || found;
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
