// `poolscope serve`: starts the service from its parsed flags and, on SIGTERM/SIGINT, drains (ends watch
// streams, closes connections, stops the sources, closes the store) and exits 0. SIGHUP re-reads the token
// files (docs/operations.md "Tokens") and never ends the process.
import { pino } from 'pino';
import type { ServeConfig } from '../service/config.js';
import { startServe, type ServeHandle } from '../service/start.js';

export async function runServe(config: ServeConfig): Promise<number> {
  const logger = pino({ name: 'poolscope', level: process.env.POOLSCOPE_LOG_LEVEL ?? 'info' });
  let handle: ServeHandle | undefined;
  // Before the start: Node's default for SIGHUP ends the process.
  const onHangup = () => {
    logger.info({ signal: 'SIGHUP' }, 'reloading token files');
    void handle?.reloadTokens();
  };
  process.on('SIGHUP', onHangup);
  try {
    handle = await startServe(config, logger);
  } catch (error) {
    logger.error({ err: error }, 'poolscope could not start');
    return 1;
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
