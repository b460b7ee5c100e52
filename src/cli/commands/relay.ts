// `poolscope relay`: one PoolRelay as a process (a sidecar as it is). Refuses a bad registration at start
// (exit 2, one line naming the flag or the file's field), then heartbeats until SIGTERM/SIGINT, exit 0.
import { startRelay } from '../../relay/relay.js';
import { EXIT_USAGE, type Command } from '../command.js';
import { wantsHelp } from '../flag-parser.js';
import { commandHelpText } from '../help.js';
import { commandLogger, untilShutdown } from './process.js';
import { followTokenFile, transportOptions } from './client-flags.js';
import { parseRelayFlags, RELAY_FLAGS } from './relay-flags.js';

const USAGE = 'relay [flags]';
const SUMMARY = "heartbeat one pool's registration (a PoolRelay)";

export const relayCommand: Command = {
  name: 'relay',
  usage: USAGE,
  summary: SUMMARY,
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(
        commandHelpText({
          usage: USAGE,
          summary: SUMMARY,
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
        }),
      );
      return 0;
    }
    const parsed = await parseRelayFlags(args, io.env);
    if (!parsed.ok) {
      io.stderr(`poolscope: ${parsed.flag}: ${parsed.message}\n`);
      return EXIT_USAGE;
    }
    const logger = commandLogger(io, 'poolscope-relay');
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
    const reason = await untilShutdown(io);
    logger.info({ signal: reason }, 'stopping');
    await relay.stop();
    token?.close();
    return 0;
  },
};
