// The credentials a ServeConfig names (docs/contract.md §8): the write and read token files and the client
// certificates' scopes file, each opened and followed (src/http/token-file.ts), or the fixed lines a test
// hands in. `reload()` re-reads every file (SIGHUP).
import type { Logger } from 'pino';
import type { AccessGuardOptions } from '../http/auth.js';
import { CertificateScopes, CertificateScopesFile, readCertificateScopesText } from '../http/certificate-scopes.js';
import { TokenFile, TokenFileError } from '../http/token-file.js';
import { readTokenFileText, TokenSet } from '../http/tokens.js';
import type { ServeConfig } from './config.js';
import { StartupError } from './startup-error.js';

export interface AuthTokens {
  auth: Pick<AccessGuardOptions, 'write' | 'read' | 'certificateScopes'>;
  /** Re-read every file now. */
  reload(): Promise<void>;
  /** Stop following the files. */
  close(): void;
}

export interface FixedTokens {
  /** Instead of `--auth-token-file`: its lines (`<token> [<scope>…]`). */
  authTokens?: readonly string[];
  /** Instead of `--read-token-file`: its tokens. */
  readTokens?: readonly string[];
  /** Instead of `--tls-client-scopes-file`: its lines (`<subject> [<scope>…]`). */
  clientScopes?: readonly string[];
  /** How often a followed file is read when no change event came (default 1 s). */
  tokenPollMs?: number;
}

export async function openAuthTokens(config: ServeConfig, logger: Logger, fixed: FixedTokens = {}): Promise<AuthTokens> {
  const files: Array<TokenFile | CertificateScopesFile> = [];
  const pollMs = fixed.tokenPollMs;
  const fixedTokens = (flag: string, lines: readonly string[], scopes: boolean): TokenSet => {
    const content = readTokenFileText(lines.join('\n'), { scopes });
    if (!content.ok) throw new TokenFileError(flag, content.problem);
    return new TokenSet(content.entries);
  };
  const open = async (flag: string, path: string | undefined, lines: readonly string[] | undefined, scopes: boolean): Promise<TokenSet | undefined> => {
    if (lines !== undefined) return fixedTokens(flag, lines, scopes);
    if (path === undefined) return undefined;
    const file = await TokenFile.open({ flag, path, logger, pollMs, scopes });
    files.push(file);
    return file.tokens;
  };
  const openScopes = async (): Promise<CertificateScopes | undefined> => {
    if (fixed.clientScopes !== undefined) {
      const content = readCertificateScopesText(fixed.clientScopes.join('\n'));
      if (!content.ok) throw new TokenFileError('tls-client-scopes-file', content.problem);
      return new CertificateScopes(content.value);
    }
    const path = config.tlsClientScopesFile;
    if (path === undefined) return undefined;
    const file = await CertificateScopesFile.open({ flag: 'tls-client-scopes-file', path, logger, pollMs });
    files.push(file);
    return file.scopes;
  };
  const close = () => files.forEach((file) => file.close());
  try {
    const write = await open('auth-token-file', config.authTokenFile, fixed.authTokens, true);
    const read = await open('read-token-file', config.readTokenFile, fixed.readTokens, false);
    const certificateScopes = await openScopes();
    return {
      auth: { write, read, certificateScopes },
      reload: async () => {
        await Promise.all(files.map((file) => file.reload()));
      },
      close,
    };
  } catch (error) {
    close();
    // A file that changed since the flags were checked: the same one line as a refused flag.
    if (error instanceof TokenFileError) throw new StartupError(`--${error.flag}`, error.message.slice(`--${error.flag}: `.length), { cause: error });
    throw error;
  }
}
