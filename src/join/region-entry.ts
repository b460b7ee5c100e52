// A region's entry in the replies (docs/contract.md §7), from its feed's status.
import type { RegionStatus } from '../contract/index.js';
import type { RegionFeedStatus } from './region-feed.js';

/** A region's entry in GET /pools, GET /routers and every `resync` (docs/contract.md §7). */
export function regionEntry(status: RegionFeedStatus): RegionStatus {
  return {
    name: status.name,
    complete: status.readable && status.refillUntilMs === undefined,
    ...(status.reason !== undefined ? { reason: status.reason } : {}),
    ...(status.unreachableSinceMs !== undefined ? { unreachable_since: new Date(status.unreachableSinceMs).toISOString() } : {}),
    dropped: status.dropped,
    ...(status.lastOutageEndedMs !== undefined
      ? { last_outage_ended: new Date(status.lastOutageEndedMs).toISOString(), renewal_window_open: status.renewalWindowOpen }
      : {}),
  };
}
