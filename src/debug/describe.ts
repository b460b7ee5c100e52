// A pool's context as /debug shows it: the /debug/pools shape (with its live leases by region,
// docs/contract.md §7), a one-line summary for the page's list, and the full detail (that shape plus
// causes, listing and the lease countdown) for the selected pool.
import { chooseLease, leaseRegions, type PoolContext, type PoolTransition } from '../../machines/pool.machine.js';
import { LISTED_STATES, type PoolState, type RegionStatus } from '../contract/index.js';
import { stateKeyOf } from './machine-graph.js';
import type { DebugPoolDetail, DebugPoolSummary, MachineGraph, TransitionCause } from './types.js';

const LISTED = new Set<string>(LISTED_STATES);

/**
 * One live lease of a pool, by the region whose store holds it (docs/contract.md §7; region '' without
 * regions). Times are that store's clock (ms), as of the lease's last logged change: a renewal that
 * changes nothing is not logged, so `deadline_ms` may be older than the real deadline.
 */
export interface DebugLease {
  region: string;
  deadline_ms: number;
  /** The registration's version there: the highest is shown (docs/contract.md §7). */
  version: number;
  /** When the registration's content last changed in that region (its store's clock: shown, never compared). */
  changed_at_ms: number;
  /** This lease's registration is the one shown (and listed): the highest version, ties to the region
   * name that sorts first. */
  shown: boolean;
}

/** One pool as GET /debug/pools shows it: its state, context and recent transitions. */
export interface DebugPool {
  pool: string;
  state: PoolState;
  since: string;
  lease: PoolContext['lease'];
  lease_deadline_ms: number | null;
  /** Every live lease, sorted by region; empty when none is live. */
  leases: DebugLease[];
  registration: PoolContext['registration'];
  relays: string[];
  frontends: string[];
  frontend_slices_with_port: boolean | null;
  history: { at: string; event: string; from: PoolState; to: PoolState }[];
}

/** GET /debug/pools: every pool, completeness, and with regions configured the regions' entries of GET /pools. */
export interface DebugPoolList {
  complete: boolean;
  reasons: string[];
  /** With regions configured only (docs/contract.md §7): one entry per region, sorted by name. */
  regions?: RegionStatus[];
  pools: DebugPool[];
}

export function describePool(context: PoolContext, state: PoolState): DebugPool {
  return {
    pool: context.key,
    state,
    since: new Date(context.since).toISOString(),
    lease: context.lease,
    lease_deadline_ms: context.leaseDeadlineMs,
    leases: describeLeases(context),
    registration: context.registration,
    relays: context.mode === 'registrations' ? (context.registration?.relay ? [context.registration.relay] : []) : context.relays,
    frontends: context.mode === 'registrations' ? (context.registration?.frontends ?? []) : context.mcsFrontends,
    frontend_slices_with_port: context.mode === 'registrations' ? null : context.frontendSlicesWithPort,
    history: context.history.map((h) => ({ ...h, at: new Date(h.at).toISOString() })),
  };
}

/** The live leases by region, marking the one whose registration is shown (the machine's own choice). */
export function describeLeases(context: PoolContext): DebugLease[] {
  const shown = chooseLease(context.leases);
  return leaseRegions(context).map((region) => {
    const lease = context.leases[region]!;
    return { region, deadline_ms: lease.deadlineMs, version: lease.version, changed_at_ms: lease.changedAtMs, shown: lease === shown };
  });
}

export function summarizePool(context: PoolContext): DebugPoolSummary {
  return {
    pool: context.key,
    state: context.state,
    since_ms: context.since,
    listed: LISTED.has(context.state) && context.registration !== null,
    model: context.registration?.model ?? null,
    lease_regions: leaseRegions(context),
  };
}

export interface DetailOptions {
  graph: MachineGraph;
  /** Causes observed by inspection. */
  causeOf: (entry: PoolTransition) => TransitionCause | undefined;
  /** The last heartbeat this replica took for the pool (wall clock ms). */
  lastHeartbeatMs: number | undefined;
}

export function detailPool(context: PoolContext, options: DetailOptions): DebugPoolDetail {
  const base = describePool(context, context.state as PoolState);
  const lastHeartbeatMs = context.lease === 'live' ? (options.lastHeartbeatMs ?? null) : null;
  const fromHeartbeat = lastHeartbeatMs === null ? null : lastHeartbeatMs + context.leaseMs;
  const logged = context.leaseDeadlineMs;
  return {
    ...base,
    listed: summarizePool(context).listed,
    since_ms: context.since,
    lease_ms: context.leaseMs,
    lease_deadline_estimate_ms: logged === null && fromHeartbeat === null ? null : Math.max(logged ?? 0, fromHeartbeat ?? 0),
    last_heartbeat_here_ms: lastHeartbeatMs,
    history: context.history.map((entry, i) => ({
      ...base.history[i]!,
      cause: options.causeOf(entry) ?? chartCause(options.graph, entry),
    })),
  };
}

/** A transition not observed (e.g. from before inspection was wired): name it from the chart when only one
 * transition leads from → to. */
function chartCause(graph: MachineGraph, entry: PoolTransition): TransitionCause {
  const candidates = graph.transitions.filter(
    (t) => t.target !== null && stateKeyOf(t.source) === entry.from && stateKeyOf(t.target) === entry.to,
  );
  const only = candidates.length === 1 ? candidates[0]! : undefined;
  return { transition: only?.id ?? null, guard: only?.guard ?? null, detail: entry.event };
}
