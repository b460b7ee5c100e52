// The write and read tokens a ServeConfig names (docs/contract.md §8): each token file opened and followed
// (src/http/token-file.ts), or the fixed tokens a test hands in. `reload()` re-reads every file (SIGHUP).
import type { Logger } from 'pino';
import type { AccessGuardOptions } from '../http/auth.js';
import { TokenFile } from '../http/token-file.js';
import { TokenSet } from '../http/tokens.js';
import type { ServeConfig } from './config.js';

export interface AuthTokens {
  auth: Pick<AccessGuardOptions, 'write' | 'read'>;
  /** Re-read every token file now. */
  reload(): Promise<void>;
  /** Stop following the files. */
  close(): void;
}

export interface FixedTokens {
  /** Instead of `--auth-token-file`. */
  authTokens?: readonly string[];
  /** Instead of `--read-token-file`. */
  readTokens?: readonly string[];
  /** How often a token file is read when no change event came (default 1 s). */
  tokenPollMs?: number;
}

export async function openAuthTokens(config: ServeConfig, logger: Logger, fixed: FixedTokens = {}): Promise<AuthTokens> {
  const files: TokenFile[] = [];
  const open = async (flag: string, path: string | undefined, tokens: readonly string[] | undefined): Promise<TokenSet | undefined> => {
    if (tokens !== undefined) return new TokenSet(tokens);
    if (path === undefined) return undefined;
    const file = await TokenFile.open({ flag, path, logger, pollMs: fixed.tokenPollMs });
    files.push(file);
    return file.tokens;
  };
  const close = () => files.forEach((file) => file.close());
  try {
    const write = await open('auth-token-file', config.authTokenFile, fixed.authTokens);
    const read = await open('read-token-file', config.readTokenFile, fixed.readTokens);
    return {
      auth: { write, read },
      reload: async () => {
        await Promise.all(files.map((file) => file.reload()));
      },
      close,
    };
  } catch (error) {
    close();
    throw error;
  }
}
