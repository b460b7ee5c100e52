// Reads the event-loop delay of a replica that runs with bench/probes/loop-delay-hook.mjs preloaded.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childMessage } from './children.js';

export const LOOP_DELAY_HOOK = fileURLToPath(new URL('../probes/loop-delay-hook.mjs', import.meta.url));

/** How late the replica's 1 ms timer ran (ms) since the last reset: percentiles over its runs, and the worst. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  samples: number;
  /** The garbage collector's pauses over the same window: the longest, its kind (major, minor, …), their sum. */
  gc: { max: number; kind: string; total: number };
}

/** The delay since the last reset; `reset` starts a new window. */
export function readLoopDelay(child: ChildProcess, reset: boolean, stderr: () => string = () => ''): Promise<LoopDelay> {
  const answer = childMessage(
    child,
    (message) => ((message as { type?: string }).type === 'loop-delay' ? (message as LoopDelay) : undefined),
    'loop-delay hook: no reply',
    stderr,
    30_000,
  );
  child.send({ type: 'loop-delay', reset });
  return answer;
}

/** The collector's pauses of a window in words: the longest one's kind and the sum, for a figure's label. */
export function gcShown(delay: LoopDelay): string {
  return `${delay.gc.kind || 'none'}; all pauses ${delay.gc.total} ms`;
}
