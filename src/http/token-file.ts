// A token file followed while the service runs (docs/contract.md §8, docs/operations.md "Tokens"): its
// TokenSet is replaced when the file's tokens (or their scopes) change, with no restart. The same for the
// client certificates' scopes file (certificate-scopes.ts): both are a FollowedFile, which reads a file at
// start and again whenever it changes. Editors and the kubelet replace a file by a rename (a Secret volume
// swaps its `..data` symlink), which a watch on the file itself misses, so the directory is watched
// (fs.watch), and the file is also read every `pollMs` in case no event comes (network filesystems, some
// container runtimes). A file that cannot be used any more (unreadable, no token, a token no Bearer header
// can carry, a bad scope) keeps the last good content and logs a warning, once per content; at start such
// a file is refused (the flags exit 2, see src/cli). The client commands follow their `--token-file` the
// same way and send its first token.
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { readTokenFileText, TokenSet, type TokenEntry } from './tokens.js';

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

export interface TokenFileOpenOptions extends TokenFileOptions {
  /** Whether a line may name scopes after its token (default true; false for `--read-token-file`). */
  scopes?: boolean;
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

/** A file's text read: what it holds and how many items (for log lines), or why it cannot be used. */
export type FileReading<T> = { ok: true; value: T; count: number } | { ok: false; problem: string };

/** What a followed file is, for its log lines: `token file` with `tokens`, `client scopes file` with `subjects`. */
export interface FileKind<T> {
  noun: string;
  items: string;
  read(text: string): FileReading<T>;
}

/** A file read at start and again whenever it changes; `use` is handed each new good content. */
export class FollowedFile<T> {
  private lastText: string | undefined;
  private count = 0;
  /** The problem last warned about, so a problem is logged once per entry into it. */
  private lastProblem: string | undefined;
  private watcher: FSWatcher | undefined;
  private poller: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  private closed = false;

  protected constructor(
    private readonly options: TokenFileOptions,
    private readonly kind: FileKind<T>,
    private readonly use: (value: T) => void,
  ) {}

  /** Reads the file (it must be usable) and follows it until close(). */
  protected async start(): Promise<void> {
    const { flag, path } = this.options;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new TokenFileError(flag, `cannot read ${JSON.stringify(path)} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    const content = this.kind.read(text);
    if (!content.ok) throw new TokenFileError(flag, `${JSON.stringify(path)} ${content.problem}`);
    this.take(content.value, content.count, text);
    this.follow();
  }

  /** Reads the file now (SIGHUP); resolves once it was read, and never rejects (a failure is logged). */
  reload(): Promise<void> {
    this.readSoon();
    return this.reading;
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    clearInterval(this.poller);
    clearTimeout(this.debounce);
  }

  /**
   * One read after those under way (every change event or poll). Anything unexpected is logged, and the
   * chain goes on: a read that failed never stops the later ones.
   */
  private readSoon(): void {
    this.reading = this.reading
      .then(() => this.readOnce())
      .catch((error: unknown) => this.options.logger.error({ flag: this.options.flag, path: this.options.path, err: error }, `${this.kind.noun} could not be re-read`));
  }

  private follow(): void {
    const name = basename(this.options.path);
    if (this.options.watchDirectory !== false) this.watchDirectory(name);
    this.poller = setInterval(() => this.readSoon(), this.options.pollMs ?? 1000);
    this.poller.unref();
  }

  private watchDirectory(name: string): void {
    try {
      // The directory, not the file: a rename over the file (or a swapped symlink) is seen there. Besides
      // the file's own name, `..` names count: a Secret volume swaps its `..data` symlink, not the file.
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent in process, it only decides whether the watcher alone keeps a process alive
      this.watcher = watch(dirname(this.options.path), { persistent: false }, (_event, changed) => {
        // Stryker disable next-line ConditionalExpression,EqualityOperator,MethodExpression,StringLiteral: equivalent in behaviour, the filter only saves reads (a re-read of an unchanged file changes and logs nothing)
        if (changed === null || changed === name || changed.startsWith('..')) this.soon();
      });
      this.watcher.on('error', () => this.watcher?.close());
    } catch (error) {
      this.options.logger.debug({ flag: this.options.flag, path: this.options.path, err: error }, `${this.kind.noun} not watched; polled only`);
    }
  }

  /** Events come in bursts (a rename is two); read once after the burst. */
  private soon(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.readSoon(), 20);
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
    const content = this.kind.read(text);
    if (!content.ok) {
      this.keep(content.problem);
      return;
    }
    this.lastProblem = undefined;
    this.take(content.value, content.count, text);
    // The count only: a token is never logged.
    logger.info({ flag, path, [this.kind.items]: content.count }, `${this.kind.noun} reloaded`);
  }

  private take(value: T, count: number, text: string): void {
    this.use(value);
    this.count = count;
    this.lastText = text;
  }

  /** The file cannot be used now: the last good content stays, and the problem is logged once. */
  private keep(problem: string): void {
    if (problem === this.lastProblem) return;
    this.lastProblem = problem;
    const { flag, path, logger } = this.options;
    logger.warn({ flag, path, reason: problem, [this.kind.items]: this.count }, `${this.kind.noun} not used: keeping the last good ${this.kind.items}`);
  }
}

const tokenFile = (scopes: boolean | undefined): FileKind<TokenEntry[]> => ({
  noun: 'token file',
  items: 'tokens',
  read: (text) => {
    const content = readTokenFileText(text, { scopes });
    return content.ok ? { ok: true, value: content.entries, count: new Set(content.tokens).size } : content;
  },
});

/** A token file, followed: its tokens (with their scopes) as a guard checks them, and its first token as a client sends it. */
export class TokenFile extends FollowedFile<TokenEntry[]> {
  /** What a guard checks: the file's tokens as digests, with their scopes. */
  readonly tokens: TokenSet;
  /** The first token of the file now: what a client sends. */
  // Stryker disable next-line StringLiteral: equivalent, open() reads the file before it hands the object out
  private firstToken = '';

  private constructor(options: TokenFileOpenOptions, tokens: TokenSet) {
    super(options, tokenFile(options.scopes), (entries) => {
      tokens.replace(entries);
      this.firstToken = entries[0]!.token;
    });
    this.tokens = tokens;
  }

  /** Reads the file (it must hold at least one valid token) and follows it until close(). */
  static async open(options: TokenFileOpenOptions): Promise<TokenFile> {
    const file = new TokenFile(options, new TokenSet());
    await file.start();
    return file;
  }

  /** The file's first token now (never logged). */
  get first(): string {
    return this.firstToken;
  }
}
