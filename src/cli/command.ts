// The shape of a `poolscope` command (main.ts holds the table) and the I/O it is given.
import type { CommandSummary } from './help.js';

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
}

export interface Command extends CommandSummary {
  name: string;
  run(args: string[], io: CliIo): Promise<number>;
}

/** A refused command line or configuration. */
export const EXIT_USAGE = 2;
/** The command ran and failed (e.g. no replica answered). */
export const EXIT_FAILURE = 1;
