// `poolscope pools`: the listed pools as a table or JSON; with --watch, the table and then one row per
// change as it comes (like `kubectl get -w`), a removed pool shown with state `deleted`; with -o json
// --watch, one JSON line per change. Incompleteness and replica switches go to stderr. With regions
// (docs/contract.md §7) the table has a REGIONS column and is followed by a line per region; under
// --watch, a region whose status changes later gets a line on stderr.
import type { ListedPool, PoolList, RegionStatus } from '../../contract/index.js';
import { getPools } from '../../client/get-pools.js';
import { watchPools, type PoolChange, type WatchStatus } from '../../client/watch-pools.js';
import { EXIT_FAILURE, EXIT_USAGE, type CliIo, type Command } from '../command.js';
import { parseFlags, quote, wantsHelp, type FlagDef } from '../flag-parser.js';
import { commandHelpText } from '../help.js';
import { checkClientFlags, clientDefaults, clientFlags, transportOptions, type ClientDraft } from './client-flags.js';
import { formatRegion, formatRegions, formatRow, formatTable, poolRow } from './pools-table.js';
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
    summary: 'after the list, print each change as it comes, until interrupted',
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

const USAGE = 'pools [flags]';
const SUMMARY = 'list the pools (-o json), or follow them (--watch)';

export const poolsCommand: Command = {
  name: 'pools',
  usage: USAGE,
  summary: SUMMARY,
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText({ usage: USAGE, summary: SUMMARY, flags: POOLS_FLAGS, notes: ['Example:', '  poolscope pools --watch'] }));
      return 0;
    }
    const draft: PoolsDraft = { ...clientDefaults(), output: 'table', watch: false, model: undefined };
    const parsed = parseFlags(args, { command: 'pools', flags: POOLS_FLAGS, draft, env: io.env });
    const refused = parsed.ok ? checkClientFlags(draft) : parsed;
    if (refused !== undefined) {
      io.stderr(`poolscope: ${refused.flag}: ${refused.message}\n`);
      return EXIT_USAGE;
    }
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
  let widths: number[] | undefined;
  // Whether the table has the REGIONS column: decided by the first list, kept for the rows that follow.
  let withRegions = false;
  const print = (change: PoolChange) => {
    const pool = change.type === 'removed' ? change.previous : change.pool;
    if (!matches(pool)) return;
    if (draft.output === 'json') {
      io.stdout(`${JSON.stringify({ type: change.type, pool })}\n`);
    } else if (widths !== undefined) {
      io.stdout(`${formatRow(poolRow(pool, change.type === 'removed' ? 'deleted' : pool.state, { regions: withRegions }), widths)}\n`);
    }
  };
  // JSON lines start with the first list's pools as `added`; the table waits for the first list whole.
  watcher.onChange(print);
  let lastStatus: WatchStatus | undefined;
  // Each region's line as last shown: a region gets a stderr line only when its line changes. The table's
  // first lines come with the table (stdout); with -o json every region line goes to stderr.
  const regionLines = new RegionLines();
  const unsubscribe = watcher.onStatus((status) => {
    const said = describeStatus(status, lastStatus);
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

/** A line for a change of replica, transport or completeness; nothing for a repeat or a region change. */
function describeStatus(status: WatchStatus, previous: WatchStatus | undefined): string | undefined {
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
