// `poolscope router-heartbeat`: registers one Global Router replica (docs/contract.md §10) with POST
// /routers and keeps its lease until SIGTERM/SIGINT (exit 0). A bad --id or --url refuses at start (exit 2,
// one line naming the flag), by the rules of POST /routers.
import { routerId, httpUrl } from '../../contract/index.js';
import { startRouterHeartbeat } from '../../client/router-heartbeat.js';
import { refuse, parseFlags, wantsHelp, type FlagDef } from '../flag-parser.js';
import { refuseUsage, reportIgnoredEnv, type Command } from '../command.js';
import { commandHelpText } from '../help.js';
import { logLevelFlag, DEFAULT_LOG_LEVEL, type LogLevel } from '../log-level.js';
import { checkClientFlags, clientDefaults, clientFlags, followTokenFile, transportOptions, type ClientDraft } from './client-flags.js';
import { commandLogger, untilShutdown } from './process.js';

interface RouterHeartbeatDraft extends ClientDraft {
  id: string | undefined;
  url: string | undefined;
  region: string | undefined;
  zone: string | undefined;
  logLevel: LogLevel;
}

/** A flag whose value must pass one of the registration's zod rules. */
function ruled(name: 'id' | 'url', summary: string, rule: typeof routerId | typeof httpUrl): FlagDef<RouterHeartbeatDraft> {
  return {
    name,
    valueName: name === 'id' ? 'ID' : 'URL',
    summary,
    defaultText: undefined,
    apply(value, draft) {
      const checked = rule.safeParse(value);
      if (!checked.success) return checked.error.issues[0]!.message;
      draft[name] = value;
      return undefined;
    },
  };
}

function text(name: 'region' | 'zone', summary: string): FlagDef<RouterHeartbeatDraft> {
  return {
    name,
    valueName: name.toUpperCase(),
    summary,
    defaultText: 'none',
    apply(value, draft) {
      if (value.length > 253) return 'must be at most 253 characters';
      draft[name] = value;
      return undefined;
    },
  };
}

export const ROUTER_HEARTBEAT_FLAGS: readonly FlagDef<RouterHeartbeatDraft>[] = [
  ...clientFlags<RouterHeartbeatDraft>(),
  ruled('id', "the router's id, a DNS-1123 label (its pod's name, say); required", routerId),
  ruled('url', 'where PoolRelays reach this router, an http(s) URL with a host; required', httpUrl),
  text('region', "the router's region (GET /routers?region= filters by it)"),
  text('zone', "the router's zone"),
  logLevelFlag<RouterHeartbeatDraft>(),
];

export const routerHeartbeatCommand: Command = {
  name: 'router-heartbeat',
  usage: 'router-heartbeat --id ID --url URL [flags]',
  summary: "register a Global Router replica (POST /routers) and keep its lease",
  flags: ROUTER_HEARTBEAT_FLAGS,
  notes: ['Example:', '  poolscope router-heartbeat --servers http://poolscope:8080 --id gr-0 --url http://10.0.1.5:9100 --region us-east-1'],
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText(routerHeartbeatCommand));
      return 0;
    }
    const draft: RouterHeartbeatDraft = { ...clientDefaults(), id: undefined, url: undefined, region: undefined, zone: undefined, logLevel: DEFAULT_LOG_LEVEL };
    const parsed = parseFlags(args, { command: 'router-heartbeat', flags: ROUTER_HEARTBEAT_FLAGS, draft, env: io.env });
    const refused =
      (parsed.ok ? checkClientFlags(draft) : parsed) ??
      (draft.id === undefined ? refuse('id', 'required: the router\'s id') : undefined) ??
      (draft.url === undefined ? refuse('url', 'required: where PoolRelays reach this router') : undefined);
    if (refused !== undefined) return refuseUsage(io, refused);
    const logger = commandLogger(io, 'poolscope-router-heartbeat', draft.logLevel);
    reportIgnoredEnv(io, 'router-heartbeat', logger);
    const token = await followTokenFile(draft, logger);
    const heartbeat = startRouterHeartbeat({
      servers: draft.servers,
      router: { id: draft.id!, url: draft.url!, ...(draft.region === undefined ? {} : { region: draft.region }), ...(draft.zone === undefined ? {} : { zone: draft.zone }) },
      ...transportOptions(draft),
      ...(token === undefined ? {} : { token: token.token }),
      logger,
    });
    const reason = await untilShutdown(io);
    logger.info({ signal: reason }, 'stopping');
    await heartbeat.stop();
    token?.close();
    return 0;
  },
};
