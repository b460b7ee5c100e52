// `--log-level` (POOLSCOPE_LOG_LEVEL) of the commands that log pino JSON lines (serve, relay, simulate):
// one of pino's levels, checked with the other flags, so a wrong one is a refusal, not pino's stack.
import type { LevelWithSilent } from 'pino';
import { sharedEnvName } from './env-names.js';
import { quote, type FlagDef } from './flag-parser.js';

export type LogLevel = LevelWithSilent;

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

/** The same name for every command: a level means the same to each. */
export function logLevelFlag<D extends { logLevel: LogLevel }>(): FlagDef<D> & { valueName: string } {
  return {
    name: 'log-level',
    valueName: 'LEVEL',
    summary: `the least level logged (pino JSON lines on stdout): ${LOG_LEVELS.join(', ')}`,
    defaultText: DEFAULT_LOG_LEVEL,
    env: sharedEnvName('log-level'),
    apply(value, draft) {
      if (!(LOG_LEVELS as readonly string[]).includes(value)) return `must be one of ${LOG_LEVELS.join(', ')} (got ${quote(value)})`;
      draft.logLevel = value as LogLevel;
      return undefined;
    },
  };
}
