// The renewal window, as a reader of a region's Redis applies it (docs/contract.md §9, lapse-rule.lua). The
// rule itself runs in Redis, on Redis's clock, from what the region's writers stamped and recorded there;
// what a reader keeps here is only its own continuity: since when it has read the store without a gap. A
// stale stamp means either an outage its writers have not recorded yet or writers that are gone, and only
// a reader that read the store while the stamp went stale (or for `silentMs` since) may take it for the
// latter (docs/design.md "Outages and staleness").
import type { RenewalWindowStatus } from '../types.js';
import type { WindowReply } from './scripts.js';

/** How often a writer stamps at least (it stamps with its sweeps, which run at least this often). */
export const STAMP_INTERVAL_MS = 1000;
/** Outages kept in the record (the oldest beyond this are removed; only recent ones can hold a lease). */
export const OUTAGES_KEPT = 32;

export interface WindowTiming {
  /** A stamp older than this is stale: the stamp interval plus the command timeout. */
  staleMs: number;
  /** A stale stamp for this long, while the reader read throughout, means the writers are gone (lease + 2 s). */
  silentMs: number;
}

export function windowTiming(commandTimeoutMs: number, leaseMs: number): WindowTiming {
  return { staleMs: STAMP_INTERVAL_MS + commandTimeoutMs, silentMs: leaseMs + 2000 };
}

/** A reader's unbroken reading of one store, carried from one read to the next (the scripts update it). */
export class ReaderContinuity {
  private lastReadMs = -1;
  private readSinceMs = 0;

  constructor(readonly timing: WindowTiming) {}

  /** ARGV of due-3.lua and window-2.lua after the stale bound: last read, read since, silent limit. */
  args(): [staleMs: number, lastReadMs: number, readSinceMs: number, silentMs: number] {
    return [this.timing.staleMs, this.lastReadMs, this.readSinceMs, this.timing.silentMs];
  }

  /**
   * The last read is no evidence that the store's data was current (a read replica not proven current):
   * the next read starts the reading anew, so no stale stamp is taken for writers that are gone.
   */
  gap(): void {
    this.lastReadMs = -1;
  }

  /** A script answered at `nowMs` (Redis's clock), with the reading unbroken since `readSinceMs`. */
  read(nowMs: number, readSinceMs: number): void {
    // Replies may arrive out of order only across reconnections, where the older one is the gap anyway.
    if (nowMs < this.lastReadMs) return;
    this.lastReadMs = nowMs;
    this.readSinceMs = readSinceMs;
  }
}

/** window-2.lua's reply as the store's types read it. */
export function parseWindowReply(reply: WindowReply): { horizonMs: number; readSinceMs: number; status: RenewalWindowStatus } {
  const [nowMs, readSinceMs, horizonMs, stampMs, lastStart, lastEnd, lastWindow, covered] = reply.map(Number) as number[] as WindowReply;
  const lastOutage = lastEnd >= 0 ? { startMs: lastStart, endMs: lastEnd, windowMs: lastWindow, covered } : undefined;
  return {
    horizonMs,
    readSinceMs,
    status: {
      nowMs,
      stampMs: stampMs >= 0 ? stampMs : undefined,
      lastOutage,
      open: lastOutage !== undefined && nowMs < lastOutage.endMs + lastOutage.windowMs,
      holding: horizonMs < nowMs,
    },
  };
}
