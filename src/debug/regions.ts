// How this replica reads each region's store, for the /debug regions strip (docs/contract.md §7): the
// join's feed statuses in the page's words, times in this replica's clock.
import type { RegionFeedStatus } from '../join/region-feed.js';
import type { DebugRegion, DebugRegionStatus } from './types.js';

export function debugRegion(status: RegionFeedStatus): DebugRegion {
  return {
    name: status.name,
    home: status.home,
    status: regionStatusOf(status),
    reason: status.reason ?? null,
    unreachable_since_ms: status.unreachableSinceMs ?? null,
    refill_until_ms: status.refillUntilMs ?? null,
    last_outage_ended_ms: status.lastOutageEndedMs ?? null,
    renewal_window_open: status.renewalWindowOpen,
  };
}

function regionStatusOf(status: RegionFeedStatus): DebugRegionStatus {
  if (status.dropped) return 'dropped';
  if (status.unreachableSinceMs !== undefined) return 'unreachable';
  if (!status.readable) return 'starting';
  if (status.refillUntilMs !== undefined) return 'refilling';
  return 'reading';
}
