// `poolscope routers`: the routers (docs/contract.md §10) as a table or JSON; with --watch, the table and
// then one row per change as it comes, a removed router shown as `deleted`; with -o json --watch, one JSON
// line per change. Incompleteness and failures go to stderr, as `poolscope pools` says them.
import type { ListedRouter } from '../../contract/index.js';
import { getRouters } from '../../client/get-pools.js';
import type { RouterChange } from '../../client/router-map.js';
import { watchRouters } from '../../client/watch-pools.js';
import { EXIT_FAILURE, refuseUsage, reportIgnoredEnv, type CliIo, type Command } from '../command.js';
import { parseFlags, quote, wantsHelp, type FlagDef } from '../flag-parser.js';
import { commandHelpText } from '../help.js';
import { checkClientFlags, clientDefaults, clientFlags, transportOptions, type ClientDraft } from './client-flags.js';
import { untilShutdown } from './process.js';

const OUTPUTS = ['table', 'json'] as const;
type Output = (typeof OUTPUTS)[number];

interface RoutersDraft extends ClientDraft {
  output: Output;
  watch: boolean;
}

export const ROUTERS_FLAGS: readonly FlagDef<RoutersDraft>[] = [
  ...clientFlags<RoutersDraft>(),
  {
    name: 'output',
    short: 'o',
    valueName: 'FORMAT',
    summary: 'table, or json (the body of GET /routers; with --watch, one JSON line per change)',
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
];

export const routersCommand: Command = {
  name: 'routers',
  usage: 'routers [flags]',
  summary: 'list the routers (-o json), or follow them (--watch)',
  flags: ROUTERS_FLAGS,
  notes: ['Example:', '  poolscope routers --watch'],
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText(routersCommand));
      return 0;
    }
    const draft: RoutersDraft = { ...clientDefaults(), output: 'table', watch: false };
    const parsed = parseFlags(args, { command: 'routers', flags: ROUTERS_FLAGS, draft, env: io.env });
    const refused = parsed.ok ? checkClientFlags(draft) : parsed;
    if (refused !== undefined) return refuseUsage(io, refused);
    reportIgnoredEnv(io, 'routers');
    return draft.watch ? watch(draft, io) : list(draft, io);
  },
};

const COLUMNS = ['ID', 'SOURCE', 'REGION', 'ZONE', 'URL'];

function row(router: ListedRouter, source: string = router.source): string[] {
  return [router.id, source, router.region ?? '-', router.zone ?? '-', router.url];
}

/** Columns as wide as their widest cell (the last one unpadded). */
function table(rows: string[][]): string {
  const widths = COLUMNS.map((header, i) => Math.max(header.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [COLUMNS, ...rows].map(line).join('\n') + '\n';
}

async function list(draft: RoutersDraft, io: CliIo): Promise<number> {
  let body;
  try {
    body = await getRouters({ servers: draft.servers, ...transportOptions(draft) });
  } catch (error) {
    io.stderr(`poolscope: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
  if (draft.output === 'json') io.stdout(`${JSON.stringify(body, null, 2)}\n`);
  else if (body.routers.length === 0) io.stderr('No routers listed.\n');
  else io.stdout(table(body.routers.map((router) => row(router))));
  if (!body.complete) io.stderr('poolscope: the list may be incomplete (complete: false); routers may be missing\n');
  return 0;
}

async function watch(draft: RoutersDraft, io: CliIo): Promise<number> {
  const watcher = watchRouters({ servers: draft.servers, ...transportOptions(draft) });
  let printedTable = draft.output === 'json';
  watcher.onChange((change: RouterChange) => {
    const router = change.type === 'removed' ? change.previous : change.router;
    if (draft.output === 'json') io.stdout(`${JSON.stringify({ type: change.type, router })}\n`);
    else if (printedTable) io.stdout(table([row(router, change.type === 'removed' ? 'deleted' : router.source)]).split('\n')[1] + '\n');
  });
  watcher.onStatus((status) => {
    if (status.failure !== undefined) io.stderr(`poolscope: ${status.failure.server}: ${status.failure.reason}; retrying\n`);
    else if (status.transport !== 'disconnected' && !status.complete) io.stderr('poolscope: the list may be incomplete (complete: false); routers may be missing\n');
  });
  const shutdown = untilShutdown(io);
  await Promise.race([watcher.ready, shutdown]);
  if (!printedTable) {
    io.stdout(table([...watcher.routers.values()].map((router) => row(router))));
    printedTable = true;
  }
  await shutdown;
  await watcher.close();
  return 0;
}
