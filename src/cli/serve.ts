// `poolscope serve`: starts the service from its parsed flags and, on SIGTERM/SIGINT, drains (ends watch
// streams, closes connections, stops the sources, closes the store) and exits 0. SIGHUP re-reads the token
// files (docs/operations.md "Tokens") and never ends the process. A failure to start is one stderr line
// naming the flag and the cause, exit 2 (docs/contract.md §6), as a refused flag is.
import { pino } from 'pino';
import type { ServeConfig } from '../service/config.js';
import { startServe, StartupError, type ServeHandle } from '../service/start.js';
import { EXIT_USAGE, reportIgnoredEnv, type CliIo } from './command.js';

export async function runServe(config: ServeConfig, io: CliIo): Promise<number> {
  const logger = pino({ name: 'poolscope', level: config.logLevel });
  reportIgnoredEnv(io, 'serve', logger);
  let handle: ServeHandle | undefined;
  // Before the start: Node's default for SIGHUP ends the process.
  const onHangup = () => {
    logger.info({ signal: 'SIGHUP' }, 'reloading token files');
    handle?.reloadTokens().catch((error: unknown) => logger.error({ err: error }, 'reloading token files failed'));
  };
  process.on('SIGHUP', onHangup);
  try {
    handle = await startServe(config, logger);
  } catch (error) {
    process.off('SIGHUP', onHangup);
    if (error instanceof StartupError) {
      io.stderr(`poolscope: ${error.message}\n`);
    } else {
      // Not a failure the operator was expected to cause: the stack goes to the log as well.
      logger.error({ err: error }, 'poolscope could not start');
      io.stderr(`poolscope: could not start: ${String(error instanceof Error ? error.message : error).split('\n')[0]}\n`);
    }
    return EXIT_USAGE;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ signal }, 'draining');
  process.off('SIGHUP', onHangup);
  await handle.stop();
  logger.info('stopped');
  return 0;
}
