// `poolscope simulate --pools N`: N simulated PoolRelays with churn (simulation.ts), until SIGTERM/SIGINT.
import { refuseUsage, reportIgnoredEnv, type Command } from '../command.js';
import { parseFlags, wantsHelp, type FlagDef, type Refusal } from '../flag-parser.js';
import { parseSecsAsMs } from '../flag-values.js';
import { commandHelpText } from '../help.js';
import { DEFAULT_LOG_LEVEL, logLevelFlag, type LogLevel } from '../log-level.js';
import { checkClientFlags, clientDefaults, clientFlags, fallbackServersFlag, followTokenFile, transportOptions, type FallbackDraft } from './client-flags.js';
import { commandLogger, untilShutdown } from './process.js';
import { seededRandom, Simulation } from './simulation.js';

const MAX_POOLS = 100_000;

export interface SimulateDraft extends FallbackDraft {
  pools: number;
  routers: number;
  firstPool: number;
  churnIntervalMs: number;
  seed: number | undefined;
  logLevel: LogLevel;
}

export const SIMULATE_FLAGS: readonly FlagDef<SimulateDraft>[] = [
  ...clientFlags<SimulateDraft>(),
  fallbackServersFlag<SimulateDraft>(),
  {
    name: 'pools',
    valueName: 'N',
    summary: 'how many pools (one PoolRelay each), from 1 to 100000',
    defaultText: '12',
    apply(value, draft) {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_POOLS) return `must be an integer from 1 to ${MAX_POOLS}`;
      draft.pools = Number(value);
      return undefined;
    },
  },
  {
    name: 'routers',
    valueName: 'N',
    summary: 'also run N simulated Global Router replicas registering with POST /routers (sim-router-0…), from 0 to 1000',
    defaultText: '0',
    apply(value, draft) {
      if (!/^\d+$/.test(value) || Number(value) > 1000) return 'must be an integer from 0 to 1000';
      draft.routers = Number(value);
      return undefined;
    },
  },
  {
    name: 'first-pool',
    valueName: 'N',
    summary: 'number the pools from N (two simulations, e.g. one per region, then hold different pools)',
    defaultText: '0',
    apply(value, draft) {
      if (!/^\d+$/.test(value) || Number(value) > MAX_POOLS * 10) return `must be an integer from 0 to ${MAX_POOLS * 10}`;
      draft.firstPool = Number(value);
      return undefined;
    },
  },
  {
    name: 'churn-interval-secs',
    valueName: 'SECS',
    summary: 'mean time between churn events (a pool stops, comes back, changes capacity or frontends); 0 for none',
    defaultText: '3',
    apply(value, draft) {
      const ms = parseSecsAsMs(value);
      if (typeof ms === 'string') return ms;
      draft.churnIntervalMs = ms;
      return undefined;
    },
  },
  {
    name: 'seed',
    valueName: 'N',
    summary: 'seed of the random choices, to repeat a run',
    defaultText: 'random',
    apply(value, draft) {
      if (!/^\d{1,9}$/.test(value)) return 'must be an integer from 0 to 999999999';
      draft.seed = Number(value);
      return undefined;
    },
  },
  logLevelFlag<SimulateDraft>(),
];

/** The flags of `poolscope simulate`, checked, with their defaults filled in. */
export function parseSimulateFlags(argv: readonly string[], env: Record<string, string | undefined>): { ok: true; config: SimulateDraft } | Refusal {
  const draft: SimulateDraft = {
    ...clientDefaults(),
    fallbackServers: [],
    pools: 12,
    routers: 0,
    firstPool: 0,
    churnIntervalMs: 3000,
    seed: undefined,
    logLevel: DEFAULT_LOG_LEVEL,
  };
  const parsed = parseFlags(argv, { command: 'simulate', flags: SIMULATE_FLAGS, draft, env });
  const refused = parsed.ok ? checkClientFlags(draft) : parsed;
  return refused ?? { ok: true, config: draft };
}

export const simulateCommand: Command = {
  name: 'simulate',
  usage: 'simulate [flags]',
  summary: 'run N simulated PoolRelays with churn, for demos and load',
  flags: SIMULATE_FLAGS,
  notes: ['Example:', '  poolscope simulate --pools 50'],
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText(simulateCommand));
      return 0;
    }
    const parsed = parseSimulateFlags(args, io.env);
    if (!parsed.ok) return refuseUsage(io, parsed);
    const draft = parsed.config;
    const logger = commandLogger(io, 'poolscope-simulate', draft.logLevel);
    reportIgnoredEnv(io, 'simulate', logger);
    // A relay's own lines are warnings and errors only (N relays would drown the churn lines), unless debugging.
    const relayLogger = logger.child({}, { level: logger.level === 'debug' || logger.level === 'trace' ? logger.level : 'warn' });
    const seed = draft.seed ?? Math.floor(Math.random() * 1e9);
    const token = await followTokenFile(draft, logger);
    const simulation = new Simulation({
      servers: draft.servers,
      fallbackServers: draft.fallbackServers,
      ...transportOptions(draft),
      ...(token === undefined ? {} : { token: token.token }),
      pools: draft.pools,
      routers: draft.routers,
      firstPool: draft.firstPool,
      churnIntervalMs: draft.churnIntervalMs,
      random: seededRandom(seed),
      logger: logger.child({ seed }),
      relayLogger,
    });
    const shutdown = untilShutdown(io);
    await Promise.race([simulation.start(), shutdown]);
    const reason = await shutdown;
    logger.info({ signal: reason }, 'stopping');
    await simulation.stop();
    token?.close();
    return 0;
  },
};
