// Bearer tokens (docs/contract.md §8): what a token file may hold, and the set of tokens a guard accepts,
// compared in constant time. A line is a token, then, in a write token file, the scopes it may write
// (scopes.ts; none: it writes anything). A token is never logged, and never named in a refusal (its line
// number is).
import { createHash, timingSafeEqual } from 'node:crypto';
import { readScopes, type Scope } from './scopes.js';

/**
 * The characters of a Bearer token (RFC 6750 `b64token`): what an `Authorization: Bearer` header can carry,
 * so what the guard (Hono's bearerAuth) can ever match. A token outside this set could never log in.
 */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export const BEARER_TOKEN_RULE = "a token may hold only letters, digits and - . _ ~ + / (then = padding), the Bearer token characters";

/** One token of a file: the token, its line (what log lines and refusals name), its scopes (undefined: unscoped). */
export interface TokenEntry {
  token: string;
  line: number;
  scopes: Scope[] | undefined;
}

/** A token file's text read: its tokens, or why it cannot be used (no token, a token no header can carry, a bad scope). */
export type TokenFileContent = { ok: true; tokens: string[]; entries: TokenEntry[] } | { ok: false; problem: string };

/**
 * One token a line, then its scopes, separated by spaces or tabs; blank lines and lines starting with '#'
 * are skipped; surrounding whitespace is trimmed. `scopes: false` (a read token file, a client's token
 * file): a line may hold a token only.
 */
export function readTokenFileText(text: string, options: { scopes?: boolean } = {}): TokenFileContent {
  const entries: TokenEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [token = '', ...words] = line.split(/[ \t]+/);
    const where = `line ${index + 1}`;
    if (!BEARER_TOKEN.test(token)) return { ok: false, problem: `${where}: ${BEARER_TOKEN_RULE}` };
    if (words.length > 0 && options.scopes === false) {
      return { ok: false, problem: `${where}: one token a line, nothing after it (only --auth-token-file takes scopes after a token)` };
    }
    const read = readScopes(words);
    if ('problem' in read) return { ok: false, problem: `${where}: ${read.problem}` };
    entries.push({ token, line: index + 1, scopes: read.scopes });
  }
  if (entries.length === 0) return { ok: false, problem: 'holds no token (only blank lines and # comments)' };
  return { ok: true, tokens: entries.map((entry) => entry.token), entries };
}

/** A token that matched: where it is written and what it may write (never the token itself). */
export interface TokenMatch {
  /** A stable name of the token for this process (its digest's start), for the audit's memory; never logged. */
  id: string;
  /** Its line in the file (the first, when it is written on several). */
  line: number;
  /** The scopes of every line it is written on; undefined when one of them is unscoped. */
  scopes: Scope[] | undefined;
}

/**
 * The tokens a guard accepts now; a token file's watcher replaces them when the file changes. Only their
 * SHA-256 digests are held, and a candidate is compared with every one of them, in constant time, without
 * stopping at the first match: the time taken tells nothing of which token, or how much of one, matched.
 * A token written on several lines may write what any of them allows.
 */
export class TokenSet {
  // Stryker disable next-line ArrayDeclaration: equivalent, the constructor replaces it
  private held: { digest: Buffer; match: TokenMatch }[] = [];

  constructor(tokens: readonly (string | TokenEntry)[] = []) {
    this.replace(tokens);
  }

  get size(): number {
    return this.held.length;
  }

  /** Whether any token has scopes (a write may be refused after its token matched). */
  get scoped(): boolean {
    return this.held.some(({ match }) => match.scopes !== undefined);
  }

  replace(tokens: readonly (string | TokenEntry)[]): void {
    const byToken = new Map<string, TokenMatch>();
    tokens.forEach((entry, index) => {
      const { token, line, scopes } = typeof entry === 'string' ? { token: entry, line: index + 1, scopes: undefined } : entry;
      const seen = byToken.get(token);
      // Stryker disable next-line MethodExpression: equivalent, the id is only a key of the audit's memory, unique either way
      if (seen === undefined) byToken.set(token, { id: digest(token).toString('hex').slice(0, 32), line, scopes });
      else seen.scopes = seen.scopes && scopes && [...seen.scopes, ...scopes];
    });
    this.held = [...byToken].map(([token, match]) => ({ digest: digest(token), match }));
  }

  matches(candidate: string): boolean {
    return this.find(candidate) !== undefined;
  }

  /** The token `candidate` is, if any: compared with every token held, in constant time. */
  find(candidate: string): TokenMatch | undefined {
    const wanted = digest(candidate);
    let found: TokenMatch | undefined;
    for (const { digest: held, match } of this.held) {
      const equal = timingSafeEqual(held, wanted);
      found = equal ? match : found;
    }
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
