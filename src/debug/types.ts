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

/** Events of GET /debug/pools/watch (`event:` is the key, `data:` the value). */
export interface DebugStreamEvents {
  /** First, and after every reconnection: everything. */
  snapshot: Completeness & { now_ms: number; pools: DebugPoolSummary[]; selected: DebugPoolDetail | null };
  /** Pools whose summary changed, and pools forgotten. */
  pools: { now_ms: number; upserted: DebugPoolSummary[]; removed: string[] };
  /** The selected pool changed (null: it was forgotten). */
  pool: { now_ms: number; pool: DebugPoolDetail | null };
  completeness: Completeness;
}

export type DebugStreamEvent = { [K in keyof DebugStreamEvents]: { kind: K; data: DebugStreamEvents[K] } }[keyof DebugStreamEvents];
