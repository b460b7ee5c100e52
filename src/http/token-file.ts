// A token file followed while the service runs (docs/contract.md §8, docs/operations.md "Tokens"): its
// TokenSet is replaced when the file's tokens change, with no restart. Editors and the kubelet replace a
// file by a rename (a Secret volume swaps its `..data` symlink), which a watch on the file itself misses,
// so the directory is watched (fs.watch), and the file is also read every `pollMs` in case no event
// comes (network filesystems, some container runtimes). A file that cannot be used any more (unreadable,
// no token, a token no Bearer header can carry) keeps the last good tokens and logs a warning, once per
// content; at start such a file is refused (the flags exit 2, see src/cli). The client commands follow
// their `--token-file` the same way and send its first token.
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { readTokenFileText, TokenSet } from './tokens.js';

export interface TokenFileOptions {
  /** The flag that named the file (`auth-token-file`), for log lines. */
  flag: string;
  path: string;
  logger: Logger;
  /** How often the file is read when no change event came (default 1000 ms; a removed token is refused within 2 s). */
  pollMs?: number;
  /** Watch the file's directory for changes (default true); false leaves the poll alone (tests). */
  watchDirectory?: boolean;
}

/** Thrown at start for a file that cannot be used; the message names the flag and the rule. */
export class TokenFileError extends Error {
  constructor(
    readonly flag: string,
    message: string,
  ) {
    super(`--${flag}: ${message}`);
    this.name = 'TokenFileError';
  }
}

export class TokenFile {
  /** What a guard checks: the file's tokens as digests. */
  readonly tokens = new TokenSet();
  /** The first token of the file now: what a client sends. */
  private firstToken = '';
  private lastText: string | undefined;
  /** The problem last warned about, so a problem is logged once per entry into it. */
  private lastProblem: string | undefined;
  private watcher: FSWatcher | undefined;
  private poller: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(private readonly options: TokenFileOptions) {}

  /** Reads the file (it must hold at least one valid token) and follows it until close(). */
  static async open(options: TokenFileOptions): Promise<TokenFile> {
    const file = new TokenFile(options);
    let text: string;
    try {
      text = await readFile(options.path, 'utf8');
    } catch (error) {
      throw new TokenFileError(options.flag, `cannot read ${JSON.stringify(options.path)} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    const content = readTokenFileText(text);
    if (!content.ok) throw new TokenFileError(options.flag, `${JSON.stringify(options.path)} ${content.problem}`);
    file.use(content.tokens);
    file.lastText = text;
    file.follow();
    return file;
  }

  /** The file's first token now (never logged). */
  get first(): string {
    return this.firstToken;
  }

  /** Reads the file now (SIGHUP, and every change event or poll); resolves once it was read. */
  reload(): Promise<void> {
    this.reading = this.reading.then(() => this.readOnce());
    return this.reading;
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    clearInterval(this.poller);
    clearTimeout(this.debounce);
  }

  private follow(): void {
    const name = basename(this.options.path);
    if (this.options.watchDirectory !== false) this.watchDirectory(name);
    this.poller = setInterval(() => void this.reload(), this.options.pollMs ?? 1000);
    this.poller.unref();
  }

  private watchDirectory(name: string): void {
    try {
      // The directory, not the file: a rename over the file (or a swapped symlink) is seen there. Besides
      // the file's own name, `..` names count: a Secret volume swaps its `..data` symlink, not the file.
      this.watcher = watch(dirname(this.options.path), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name || changed.startsWith('..')) this.soon();
      });
      this.watcher.on('error', () => this.watcher?.close());
    } catch (error) {
      this.options.logger.debug({ flag: this.options.flag, path: this.options.path, err: error }, 'token file not watched; polled only');
    }
  }

  /** Events come in bursts (a rename is two); read once after the burst. */
  private soon(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.reload(), 20);
    this.debounce.unref();
  }

  private async readOnce(): Promise<void> {
    if (this.closed) return;
    const { flag, path, logger } = this.options;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      this.keep(`cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
      return;
    }
    if (text === this.lastText) {
      this.lastProblem = undefined;
      return;
    }
    const content = readTokenFileText(text);
    if (!content.ok) {
      this.keep(content.problem);
      return;
    }
    this.lastText = text;
    this.lastProblem = undefined;
    this.use(content.tokens);
    // The count only: a token is never logged.
    logger.info({ flag, path, tokens: this.tokens.size }, 'token file reloaded');
  }

  private use(tokens: readonly string[]): void {
    this.tokens.replace(tokens);
    this.firstToken = tokens[0]!;
  }

  /** The file cannot be used now: the last good tokens stay, and the problem is logged once. */
  private keep(problem: string): void {
    if (problem === this.lastProblem) return;
    this.lastProblem = problem;
    const { flag, path, logger } = this.options;
    logger.warn({ flag, path, reason: problem, tokens: this.tokens.size }, 'token file not used: keeping the last good tokens');
  }
}
