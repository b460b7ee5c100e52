// What the long-running client commands share with a process: a pino logger at their `--log-level`
// (POOLSCOPE_LOG_LEVEL), and the wait for SIGTERM/SIGINT (or, in tests, for the CliIo's shutdown signal).
import { pino, type Logger } from 'pino';
import type { CliIo } from '../command.js';
import type { LogLevel } from '../log-level.js';

/** pino JSON lines on the command's stdout (as serve logs), so a test's CliIo captures them too. */
export function commandLogger(io: CliIo, name: string, level: LogLevel): Logger {
  return pino({ name, level }, { write: (line: string) => io.stdout(line) });
}

/** Resolves with what ended the wait: a signal's name, or `shutdown` when `io.shutdown` aborted. */
export function untilShutdown(io: CliIo): Promise<string> {
  return new Promise((resolve) => {
    const done = (reason: string) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      io.shutdown?.removeEventListener('abort', onAbort);
      resolve(reason);
    };
    const onTerm = () => done('SIGTERM');
    const onInt = () => done('SIGINT');
    const onAbort = () => done('shutdown');
    if (io.shutdown !== undefined) {
      if (io.shutdown.aborted) return done('shutdown');
      io.shutdown.addEventListener('abort', onAbort, { once: true });
      return;
    }
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
  });
}
