// The shape of a `poolscope` command (command-table.ts lists them) and the I/O it is given.
import type { Logger } from 'pino';
import { describeIgnoredEnv, type IgnoredEnv } from './env-names.js';
import type { FlagDef, Refusal } from './flag-parser.js';

/** Where the CLI writes and what environment it reads; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /**
   * Ends a long-running command (relay, simulate, pools --watch) as SIGTERM would. When given, process
   * signals are left alone, so a test can run a command in-process.
   */
  shutdown?: AbortSignal;
  /** POOLSCOPE_* names of `env` the command does not read (main.ts fills it in): said once at start. */
  ignoredEnv?: readonly IgnoredEnv[];
}

export interface CommandSummary {
  /** How the command is typed, e.g. `serve [flags]`. */
  usage: string;
  summary: string;
}

export interface Command extends CommandSummary {
  name: string;
  /**
   * Every flag, in the order `--help` lists them: `--help`, README's tables and the environment names
   * (env-names.ts) are all made from it.
   */
  flags: readonly FlagDef<never>[];
  /** The heading a flag is listed under (`--help`, README); undefined for one plain list. */
  section?(flag: FlagDef<never>): string;
  /** Lines `--help` prints after the flags (examples). */
  notes?: readonly string[];
  run(args: string[], io: CliIo): Promise<number>;
}

/** A refused command line or configuration, or a failure to start (docs/contract.md §6). */
export const EXIT_USAGE = 2;
/** The command ran and failed (e.g. no replica answered). */
export const EXIT_FAILURE = 1;

/**
 * The one stderr line of a refusal, exit 2. When the user set the old environment name of the refused
 * flag (`POOLSCOPE_REDIS_URL` for serve's `--redis-url`), the line says which name is read now.
 */
export function refuseUsage(io: CliIo, refusal: Refusal): number {
  const old = io.ignoredEnv?.find((entry) => `--${entry.insteadOf?.flag}` === refusal.flag);
  const hint = old === undefined ? '' : ` (${old.name} is not read: set ${old.insteadOf!.name})`;
  io.stderr(`poolscope: ${refusal.flag}: ${refusal.message}${hint}\n`);
  return EXIT_USAGE;
}

/** Says once, at start, which POOLSCOPE_* names the command ignores: a pino warning, or a stderr line. */
export function reportIgnoredEnv(io: CliIo, command: string, logger?: Logger): void {
  const ignored = io.ignoredEnv ?? [];
  if (ignored.length === 0) return;
  if (logger === undefined) {
    io.stderr(`poolscope: warning: ${describeIgnoredEnv(command, ignored)}\n`);
    return;
  }
  logger.warn(
    { ignored_env: Object.fromEntries(ignored.map((entry) => [entry.name, entry.why])) },
    `ignoring environment names ${command} does not read`,
  );
}
