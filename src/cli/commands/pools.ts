// `poolscope pools`: the listed pools as a table or JSON; with --watch, the table and then one row per
// change as it comes (like `kubectl get -w`), a removed pool shown with state `deleted`; with -o json
// --watch, one JSON line per change. Incompleteness, replica switches and failures (with what to do about
// them) go to stderr. With regions (docs/contract.md §7) the table has a REGIONS column and is followed by
// a line per region; under --watch, a region whose status changes later gets a line on stderr. Under
// --watch, a row wider than its columns widens them, and the header is printed again above it, so every
// row lines up with the header above it (nothing is cut short).
import type { ListedPool, PoolList, RegionStatus } from '../../contract/index.js';
import { getPools } from '../../client/get-pools.js';
import { nextStep } from '../../client/next-step.js';
import { watchPools, type PoolChange, type WatchStatus } from '../../client/watch-pools.js';
import { EXIT_FAILURE, refuseUsage, reportIgnoredEnv, type CliIo, type Command } from '../command.js';
import { parseFlags, quote, wantsHelp, type FlagDef } from '../flag-parser.js';
import { commandHelpText } from '../help.js';
import { checkClientFlags, clientDefaults, clientFlags, transportOptions, type ClientDraft } from './client-flags.js';
import { formatRegion, formatRegions, formatRow, formatTable, poolRow, tableColumns } from './pools-table.js';
import { untilShutdown } from './process.js';

const OUTPUTS = ['table', 'json'] as const;
type Output = (typeof OUTPUTS)[number];

interface PoolsDraft extends ClientDraft {
  output: Output;
  watch: boolean;
  model: string | undefined;
}

export const POOLS_FLAGS: readonly FlagDef<PoolsDraft>[] = [
  ...clientFlags<PoolsDraft>(),
  {
    name: 'output',
    short: 'o',
    valueName: 'FORMAT',
    summary: 'table, or json (the body of GET /pools; with --watch, one JSON line per change)',
    defaultText: 'table',
    apply(value, draft) {
      if (!(OUTPUTS as readonly string[]).includes(value)) return `must be one of ${OUTPUTS.join(', ')} (got ${quote(value)})`;
      draft.output = value as Output;
      return undefined;
    },
  },
  {
    name: 'watch',
    short: 'w',
    valueName: undefined,
    summary: 'after the list, print each change as it comes, until interrupted; a row wider than the columns widens them under a new header',
    defaultText: 'off',
    apply(value, draft) {
      draft.watch = value === 'true';
      return undefined;
    },
  },
  {
    name: 'model',
    valueName: 'MODEL',
    summary: 'only pools serving this model',
    defaultText: 'every model',
    apply(value, draft) {
      draft.model = value;
      return undefined;
    },
  },
];

export const poolsCommand: Command = {
  name: 'pools',
  usage: 'pools [flags]',
  summary: 'list the pools (-o json), or follow them (--watch)',
  flags: POOLS_FLAGS,
  notes: ['Example:', '  poolscope pools --watch'],
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText(poolsCommand));
      return 0;
    }
    const draft: PoolsDraft = { ...clientDefaults(), output: 'table', watch: false, model: undefined };
    const parsed = parseFlags(args, { command: 'pools', flags: POOLS_FLAGS, draft, env: io.env });
    const refused = parsed.ok ? checkClientFlags(draft) : parsed;
    if (refused !== undefined) return refuseUsage(io, refused);
    reportIgnoredEnv(io, 'pools');
    return draft.watch ? watch(draft, io) : list(draft, io);
  },
};

async function list(draft: PoolsDraft, io: CliIo): Promise<number> {
  let body: PoolList;
  try {
    body = await getPools({ servers: draft.servers, ...transportOptions(draft) });
  } catch (error) {
    io.stderr(`poolscope: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
  const pools = body.pools.filter((pool) => draft.model === undefined || pool.model === draft.model);
  if (draft.output === 'json') {
    io.stdout(`${JSON.stringify({ ...body, pools }, null, 2)}\n`);
  } else {
    if (pools.length === 0) io.stderr('No pools listed.\n');
    else io.stdout(formatTable(pools, { regions: body.regions !== undefined }).text);
    if (body.regions !== undefined) io.stdout(regionsBlock(body.regions, pools.length > 0));
  }
  if (!body.complete) io.stderr('poolscope: the list may be incomplete (complete: false); pools may be missing\n');
  return 0;
}

async function watch(draft: PoolsDraft, io: CliIo): Promise<number> {
  const matches = (pool: ListedPool) => draft.model === undefined || pool.model === draft.model;
  const watcher = watchPools({ servers: draft.servers, ...transportOptions(draft) });
  const setup = { token: draft.token !== undefined, ca: draft.ca !== undefined, cert: draft.cert !== undefined, access: 'read' } as const;
  let widths: number[] | undefined;
  // Whether the table has the REGIONS column: decided by the first list, kept for the rows that follow.
  let withRegions = false;
  const print = (change: PoolChange) => {
    const pool = change.type === 'removed' ? change.previous : change.pool;
    if (!matches(pool)) return;
    if (draft.output === 'json') {
      io.stdout(`${JSON.stringify({ type: change.type, pool })}\n`);
    } else if (widths !== undefined) {
      const row = poolRow(pool, change.type === 'removed' ? 'deleted' : pool.state, { regions: withRegions });
      // The last column is never padded, so only the others can be too narrow.
      const wider = widths.map((width, i) => (i === widths!.length - 1 ? width : Math.max(width, row[i]!.length)));
      if (wider.some((width, i) => width !== widths![i])) {
        widths = wider;
        io.stdout(`${formatRow(tableColumns({ regions: withRegions }), widths)}\n`);
      }
      io.stdout(`${formatRow(row, widths)}\n`);
    }
  };
  // JSON lines start with the first list's pools as `added`; the table waits for the first list whole.
  watcher.onChange(print);
  let lastStatus: WatchStatus | undefined;
  // Each region's line as last shown: a region gets a stderr line only when its line changes. The table's
  // first lines come with the table (stdout); with -o json every region line goes to stderr.
  const regionLines = new RegionLines();
  const unsubscribe = watcher.onStatus((status) => {
    const said = describeStatus(status, lastStatus, setup);
    lastStatus = status;
    if (said !== undefined) io.stderr(`poolscope: ${said}\n`);
    if (draft.output === 'json' || widths !== undefined) {
      for (const line of regionLines.changed(status.regions)) io.stderr(`poolscope: ${line}\n`);
    }
  });
  const shutdown = untilShutdown(io);
  await Promise.race([watcher.ready, shutdown]);
  if (draft.output === 'table') {
    const regions = watcher.status.regions;
    withRegions = regions !== undefined;
    const table = formatTable([...watcher.pools.values()].filter(matches), { regions: withRegions });
    widths = table.widths;
    io.stdout(table.text);
    if (regions !== undefined) {
      regionLines.changed(regions);
      io.stdout(regionsBlock(regions, true));
    }
  }
  await shutdown;
  unsubscribe();
  await watcher.close();
  return 0;
}

/** The lines after the table: a blank line (when a table was printed), then one per region. */
function regionsBlock(regions: readonly RegionStatus[], afterTable: boolean): string {
  return `${afterTable ? '\n' : ''}${formatRegions(regions)}`;
}

/** Remembers each region's line, to say only what changed. */
class RegionLines {
  private readonly shown = new Map<string, string>();

  /** The lines of the regions whose status differs from the last one seen (every region, the first time). */
  changed(regions: readonly RegionStatus[] | undefined): string[] {
    const lines: string[] = [];
    for (const region of regions ?? []) {
      const line = formatRegion(region);
      if (this.shown.get(region.name) === line) continue;
      this.shown.set(region.name, line);
      lines.push(line);
    }
    return lines;
  }
}

/**
 * A line for a change of replica, transport, completeness or failure; nothing for a repeat or a region
 * change. A failure is said with what to do about it (`next: pass a read token with --token-file`).
 */
function describeStatus(status: WatchStatus, previous: WatchStatus | undefined, setup: Parameters<typeof nextStep>[1]): string | undefined {
  const failure = status.failure;
  if (failure !== undefined && failure.reason !== previous?.failure?.reason) {
    const step = nextStep(failure, setup);
    return `${failure.server}: ${failure.reason}${step === undefined ? '' : `; next: ${step}`}; retrying`;
  }
  const same =
    previous !== undefined &&
    previous.server === status.server &&
    previous.transport === status.transport &&
    previous.complete === status.complete;
  if (same) return undefined;
  if (status.transport === 'disconnected') {
    return previous?.transport === 'disconnected' ? undefined : `lost ${status.server}; reconnecting (pools kept)`;
  }
  const how = status.transport === 'sse' ? 'watching' : 'polling';
  const completeness = status.complete ? '' : ' (incomplete: pools may be missing; none is dropped meanwhile)';
  return `${how} ${status.server}${completeness}`;
}
