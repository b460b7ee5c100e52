// The shapes /debug serves: the chart as data, pool summaries and details, and the watch stream's
// events. Imported as types by the page too (src/debug/page), so server and page cannot disagree.
import type { DebugPool } from './describe.js';

/** One state of the chart. `id` is xstate's (`pool.live`), `key` its name (`live`). */
export interface GraphState {
  id: string;
  key: string;
  /** Entry actions, by name. */
  entry: string[];
}

export type TransitionKind = 'event' | 'always' | 'after';

/** One transition of the chart, targeted or not (a targetless one runs actions and stays). */
export interface GraphTransition {
  /** Stable within a chart: `<source id>|<event or "always">|<index>`. */
  id: string;
  kind: TransitionKind;
  /** Source state id (the root's id for transitions every state takes). */
  source: string;
  /** Target state id; null for a targetless transition. */
  target: string | null;
  /** The event type; '' for `always`; the delay's event (`xstate.after.…`) for `after`. */
  event: string;
  /** What to print: the event, `always`, or `after <delay>`. */
  label: string;
  guard: string | null;
  /** The named delay of an `after` transition. */
  delay: string | null;
  actions: string[];
}

export interface MachineGraph {
  id: string;
  /** The root's initial state id. */
  initial: string;
  states: GraphState[];
  transitions: GraphTransition[];
}

/** Why a pool moved: the event that came in, what it carried, and the transition the chart took. */
export interface TransitionCause {
  /** The graph transition taken (null when it was not observed, e.g. before inspection was wired). */
  transition: string | null;
  guard: string | null;
  /** The event's facts in words. */
  detail: string;
}

export type DebugHistoryEntry = DebugPool['history'][number] & { cause: TransitionCause };

/** One pool as the page's list shows it. */
export interface DebugPoolSummary {
  pool: string;
  state: string;
  /** When it entered its state (wall clock ms of this replica). */
  since_ms: number;
  listed: boolean;
  model: string | null;
  /** The regions holding a live lease for it, sorted ('' without regions). */
  lease_regions: string[];
}

/** One pool in full: /debug/pools/:key and the page's selected pool. */
export interface DebugPoolDetail extends Omit<DebugPool, 'history'> {
  listed: boolean;
  since_ms: number;
  lease_ms: number;
  /**
   * Best known lease deadline (ms): the later of the deadline the store last logged and the last heartbeat
   * this replica took plus the lease. Renewals that change nothing are not logged, so the logged one alone
   * goes stale; heartbeats taken by other replicas are not seen here. The store's clock decides.
   */
  lease_deadline_estimate_ms: number | null;
  /** The last heartbeat for this pool that this replica took (wall clock ms), if any. */
  last_heartbeat_here_ms: number | null;
  history: DebugHistoryEntry[];
}

export interface Completeness {
  complete: boolean;
  reasons: string[];
}

/**
 * How this replica reads a region's store (docs/contract.md §7), for the page's regions strip:
 * `starting` not read yet; `reading` read in full and followed; `refilling` its store lost its data and
 * PoolRelays are re-registering (pools it lacks are kept for one lease); `unreachable` it cannot be read and
 * its pools are held as last read; `dropped` held longer than the hold, its pools left this replica's view.
 */
export type DebugRegionStatus = 'starting' | 'reading' | 'refilling' | 'unreachable' | 'dropped';

export interface DebugRegion {
  name: string;
  /** This replica's region: it writes heartbeats there, and it is never dropped. */
  home: boolean;
  /** Only `reading` is complete (its entry in GET /pools says `complete: true`). */
  status: DebugRegionStatus;
  reason: string | null;
  /** This replica's clock (ms) when the region stopped answering. */
  unreachable_since_ms: number | null;
  /** While refilling: until when (ms, this replica's clock). */
  refill_until_ms: number | null;
  /** When the last outage of the region's store ended (ms, the store's clock; docs/contract.md §9). */
  last_outage_ended_ms: number | null;
  /** Leases that ran out in that outage are not lapsed before its renewal window has run. */
  renewal_window_open: boolean;
}

/** The states the fleet overview counts (the contract's five; `absent` pools are only kept for /debug). */
export const OVERVIEW_STATES = ['live', 'frontendless', 'one-sided', 'unregistered', 'lapsed'] as const;
export type OverviewState = (typeof OVERVIEW_STATES)[number];

/** One row of the fleet overview: pools by state in one region (or with no live lease). */
export interface OverviewRow {
  /** The region holding the leases counted; null: pools that hold no live lease. Without regions, the one
   * row is region '' and counts every pool. */
  region: string | null;
  counts: Record<OverviewState, number>;
  total: number;
}

/**
 * Pools by region and state, and the same by model: a pool is counted once in every region it holds a
 * live lease in, and once in the `region: null` row when it holds none (docs/contract.md §3, §7).
 */
export interface FleetOverview {
  /** Every region (sorted; the home one included even when empty), then the no-lease row. */
  by_region: OverviewRow[];
  /** Models sorted by name, null (no registration seen) last; each with its non-empty rows only. */
  by_model: { model: string | null; rows: OverviewRow[] }[];
}

/** Events of GET /debug/pools/watch (`event:` is the key, `data:` the value). */
export interface DebugStreamEvents {
  /** First, and after every reconnection: everything. */
  snapshot: Completeness & {
    now_ms: number;
    pools: DebugPoolSummary[];
    selected: DebugPoolDetail | null;
    /** Every region, sorted; null without regions (the page then hides its regions strip). */
    regions: DebugRegion[] | null;
    overview: FleetOverview;
  };
  /** Pools whose summary changed, and pools forgotten. */
  pools: { now_ms: number; upserted: DebugPoolSummary[]; removed: string[] };
  /** The selected pool changed (null: it was forgotten). */
  pool: { now_ms: number; pool: DebugPoolDetail | null };
  completeness: Completeness;
  /** A region's status changed (sent only with regions configured). */
  regions: { now_ms: number; regions: DebugRegion[] };
  /** The fleet overview's counts changed. */
  overview: { now_ms: number; overview: FleetOverview };
}

export type DebugStreamEvent = { [K in keyof DebugStreamEvents]: { kind: K; data: DebugStreamEvents[K] } }[keyof DebugStreamEvents];
