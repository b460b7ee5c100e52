// `poolscope simulate --pools N`: N simulated PoolRelays with churn (simulation.ts), until SIGTERM/SIGINT.
import { EXIT_USAGE, type Command } from '../command.js';
import { parseFlags, wantsHelp, type FlagDef } from '../flag-parser.js';
import { parseSecsAsMs } from '../flag-table.js';
import { commandHelpText } from '../help.js';
import { checkClientFlags, clientDefaults, clientFlags, fallbackServersFlag, followTokenFile, transportOptions, type FallbackDraft } from './client-flags.js';
import { commandLogger, untilShutdown } from './process.js';
import { seededRandom, Simulation } from './simulation.js';

const MAX_POOLS = 100_000;

interface SimulateDraft extends FallbackDraft {
  pools: number;
  firstPool: number;
  churnIntervalMs: number;
  seed: number | undefined;
}

export const SIMULATE_FLAGS: readonly FlagDef<SimulateDraft>[] = [
  ...clientFlags<SimulateDraft>(),
  fallbackServersFlag<SimulateDraft>(),
  {
    name: 'pools',
    valueName: 'N',
    summary: 'how many pools (one PoolRelay each)',
    defaultText: '12',
    apply(value, draft) {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_POOLS) return `must be an integer from 1 to ${MAX_POOLS}`;
      draft.pools = Number(value);
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
];

const USAGE = 'simulate [flags]';
const SUMMARY = 'run N simulated PoolRelays with churn, for demos and load';

export const simulateCommand: Command = {
  name: 'simulate',
  usage: USAGE,
  summary: SUMMARY,
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText({ usage: USAGE, summary: SUMMARY, flags: SIMULATE_FLAGS, notes: ['Example:', '  poolscope simulate --pools 50'] }));
      return 0;
    }
    const draft: SimulateDraft = { ...clientDefaults(), fallbackServers: [], pools: 12, firstPool: 0, churnIntervalMs: 3000, seed: undefined };
    const parsed = parseFlags(args, { command: 'simulate', flags: SIMULATE_FLAGS, draft, env: io.env });
    const refused = parsed.ok ? checkClientFlags(draft) : parsed;
    if (refused !== undefined) {
      io.stderr(`poolscope: ${refused.flag}: ${refused.message}\n`);
      return EXIT_USAGE;
    }
    const logger = commandLogger(io, 'poolscope-simulate');
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
