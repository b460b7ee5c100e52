// Logs in tests, never printed to the console: a logger whose JSON lines land in an array (so a test can
// assert warnings and their fields), one that drops everything, and the output of a CLI command run
// in-process (its pino lines on stdout, parsed the same way). Every line any of them sees is checked for
// a key twice in one object (log-lines.ts), the silent logger's too: it writes its lines, at debug, to
// that check alone.
import { pino, type Logger } from 'pino';
import type { CliIo } from '../../src/cli/command.js';
import { checkLogLine, checkLogText } from './log-lines.js';

/** One parsed pino line. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLogs {
  logger: Logger;
  /** Every line logged so far, parsed, in order. */
  lines: LogLine[];
  /** Lines at level warn (40). */
  warnings(): LogLine[];
}

export function captureLogs(level: pino.Level = 'debug'): CapturedLogs {
  const lines: LogLine[] = [];
  const logger = pino(
    { level },
    {
      write: (line: string) => {
        checkLogLine(line, 'captureLogs');
        lines.push(JSON.parse(line) as LogLine);
      },
    },
  );
  return { logger, lines, warnings: () => lines.filter((line) => line.level === 40) };
}

/** Prints nothing; its lines (at debug) are only checked (log-lines.ts). */
export const silentLogger = (): Logger => pino({ level: 'debug' }, { write: (line: string) => checkLogLine(line, 'silentLogger') });

export interface CapturedCliIo {
  /** Pass to `main(argv, io)`. */
  io: CliIo;
  out(): string;
  err(): string;
  /** The command's pino lines on stdout, parsed. */
  lines(): LogLine[];
  /** Abort the io's shutdown signal (as SIGTERM would end the command). */
  stop(): void;
}

export function captureCliIo(env: CliIo['env'] = {}): CapturedCliIo {
  let out = '';
  let err = '';
  const shutdown = new AbortController();
  return {
    io: {
      stdout: (text) => {
        checkLogText(text, 'a command run in-process');
        out += text;
      },
      stderr: (text) => void (err += text),
      env,
      shutdown: shutdown.signal,
    },
    out: () => out,
    err: () => err,
    lines: () => out.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as LogLine),
    stop: () => shutdown.abort(),
  };
}
