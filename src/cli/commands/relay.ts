// `poolscope relay`: one PoolRelay as a process (a sidecar as it is). Refuses a bad registration at start
// (exit 2, one line naming the flag or the file's field), then heartbeats until SIGTERM/SIGINT, exit 0.
import { startRelay } from '../../relay/relay.js';
import { refuseUsage, reportIgnoredEnv, type Command } from '../command.js';
import { wantsHelp } from '../flag-parser.js';
import { commandHelpText } from '../help.js';
import { commandLogger, untilShutdown } from './process.js';
import { followTokenFile, transportOptions } from './client-flags.js';
import { parseRelayFlags, RELAY_FLAGS } from './relay-flags.js';

export const relayCommand: Command = {
  name: 'relay',
  usage: 'relay [flags]',
  summary: "heartbeat one pool's registration (a PoolRelay)",
  flags: RELAY_FLAGS,
  notes: [
    'The registration comes from --registration-file, from the field flags, or both (a flag wins).',
    'Example:',
    '  poolscope relay --servers http://poolscope:8080 --registration-file pool.yaml',
    '  poolscope relay --servers http://poolscope.us-east-1:8080 --fallback-servers http://poolscope.eu-west-1:8080 \\',
    '    --registration-file pool.yaml',
    '  poolscope relay --cluster-id us-east-1 --namespace llm --name llama-70b \\',
    '    --model meta-llama/Llama-3.1-70B-Instruct --capacity gpus=8 --frontends http://10.0.0.7:8000',
  ],
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText(relayCommand));
      return 0;
    }
    const parsed = await parseRelayFlags(args, io.env);
    if (!parsed.ok) return refuseUsage(io, parsed);
    const logger = commandLogger(io, 'poolscope-relay', parsed.config.logLevel);
    reportIgnoredEnv(io, 'relay', logger);
    const token = await followTokenFile(parsed.config, logger);
    const relay = startRelay({
      servers: parsed.config.servers,
      fallbackServers: parsed.config.fallbackServers,
      registration: parsed.config.registration,
      ...transportOptions(parsed.config),
      ...(token === undefined ? {} : { token: token.token }),
      requestTimeoutMs: parsed.config.requestTimeoutMs,
      logger,
    });
    // The routers this PoolRelay should keep a connection to (docs/contract.md §10): one line per change.
    relay.onRoutersChange((change) => {
      const url = change.type === 'removed' ? change.previous.url : change.router.url;
      logger.info({ router: change.id, url, change: change.type, routers: relay.routers().length }, `router ${change.type}`);
    });
    const reason = await untilShutdown(io);
    logger.info({ signal: reason }, 'stopping');
    await relay.stop();
    token?.close();
    return 0;
  },
};
