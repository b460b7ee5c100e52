// What every benchmark part gets and gives.
import type { Logger } from 'pino';
import type { BenchSizes } from '../lib/config.js';
import type { PartName, PartResult } from '../report/types.js';

export interface PartContext {
  sizes: BenchSizes;
  logger: Logger;
}

export interface BenchPart {
  name: PartName;
  run(context: PartContext): Promise<Omit<PartResult, 'durationMs' | 'loadAverageAtStart'>>;
}
