// A pino logger whose lines land in an array, so tests can assert warnings and their fields.
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface CapturedLogs {
  logger: Logger;
  lines: Record<string, unknown>[];
  /** Lines at level warn (40). */
  warnings(): Record<string, unknown>[];
}

export function captureLogs(level: pino.Level = 'debug'): CapturedLogs {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level }, sink);
  return { logger, lines, warnings: () => lines.filter((l) => l.level === 40) };
}
