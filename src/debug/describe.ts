// A pool actor's context as /debug shows it: the /debug/pools shape, a one-line summary for the page's
// list, and the full detail (that shape plus causes, listing and the lease countdown) for the selected pool.
import type { PoolContext, PoolTransition } from '../../machines/pool.machine.js';
import { LISTED_STATES, type PoolState } from '../contract/index.js';
import { stateKeyOf } from './machine-graph.js';
import type { DebugPoolDetail, DebugPoolSummary, MachineGraph, TransitionCause } from './types.js';

const LISTED = new Set<string>(LISTED_STATES);

/** One pool as GET /debug/pools shows it: its state, context and recent transitions. */
export interface DebugPool {
  pool: string;
  state: PoolState;
  since: string;
  lease: PoolContext['lease'];
  lease_deadline_ms: number | null;
  registration: PoolContext['registration'];
  relays: string[];
  frontends: string[];
  frontend_slices_with_port: boolean | null;
  history: { at: string; event: string; from: PoolState; to: PoolState }[];
}

export function describePool(context: PoolContext, state: PoolState): DebugPool {
  return {
    pool: context.key,
    state,
    since: new Date(context.since).toISOString(),
    lease: context.lease,
    lease_deadline_ms: context.leaseDeadlineMs,
    registration: context.registration,
    relays: context.mode === 'registrations' ? (context.registration?.relay ? [context.registration.relay] : []) : context.relays,
    frontends: context.mode === 'registrations' ? (context.registration?.frontends ?? []) : context.mcsFrontends,
    frontend_slices_with_port: context.mode === 'registrations' ? null : context.frontendSlicesWithPort,
    history: context.history.map((h) => ({ ...h, at: new Date(h.at).toISOString() })),
  };
}

export function summarizePool(context: PoolContext): DebugPoolSummary {
  return {
    pool: context.key,
    state: context.state,
    since_ms: context.since,
    listed: LISTED.has(context.state) && context.registration !== null,
    model: context.registration?.model ?? null,
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
