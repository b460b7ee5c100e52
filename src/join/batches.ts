// Work over many pools (a store snapshot of 100,000 leases, a region's refill) in batches, one per turn of
// the event loop, so /healthz, GET /pools and heartbeats are answered in between (docs/design.md "The
// actors"): a batch of 2,000 pools takes a few tens of milliseconds.
import { setImmediate as nextTurn } from 'node:timers/promises';

export const DEFAULT_BATCH_SIZE = 2000;

/**
 * Calls `fn` with each run of up to `size` of `items` as they are now (what is added meanwhile is not
 * theirs), yielding the event loop between two runs.
 */
export async function eachBatch<T>(items: readonly T[], size: number, fn: (batch: readonly T[]) => void): Promise<void> {
  const end = items.length;
  for (let start = 0; start < end; start += size) {
    if (start > 0) await nextTurn();
    fn(items.slice(start, Math.min(start + size, end)));
  }
}

/** Calls `fn` for every item, `size` at a time, yielding the event loop between two batches. */
export async function inBatches<T>(items: Iterable<T>, size: number, fn: (item: T) => void): Promise<void> {
  let inBatch = 0;
  for (const item of items) {
    if (inBatch === size) {
      await nextTurn();
      inBatch = 0;
    }
    fn(item);
    inBatch += 1;
  }
}
