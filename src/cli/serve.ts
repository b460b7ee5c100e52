// `poolscope serve`: starts the service from its parsed flags and, on SIGTERM/SIGINT, drains (ends watch
// streams, closes connections, stops the sources, closes the store) and exits 0.
import { pino } from 'pino';
import type { ServeConfig } from '../service/config.js';
import { startServe, type ServeHandle } from '../service/start.js';

export async function runServe(config: ServeConfig): Promise<number> {
  const logger = pino({ name: 'poolscope', level: process.env.POOLSCOPE_LOG_LEVEL ?? 'info' });
  let handle: ServeHandle;
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
  await handle.stop();
  logger.info('stopped');
  return 0;
}
