// XState inspection of the pool actors, turned into what /debug and the metrics want to know: which pool
// changed, which transitions it took and why (the event that came in and the guarded transition the chart
// chose), whether its lease just lapsed, and when its actor stopped. Fed by the `inspect` option every
// pool actor is created with (PoolDirectory), so nothing here polls or wraps the actors.
import type { AnyEventObject, AnyTransitionDefinition, InspectionEvent } from 'xstate';
import type { PoolContext, PoolTransition } from '../../machines/pool.machine.js';
import { describeFacts, eventFacts, type EventFacts } from './causes.js';
import { guardName, stateKeyOf, transitionId } from './machine-graph.js';
import type { TransitionCause } from './types.js';

export type PoolChange =
  | {
      kind: 'snapshot';
      key: string;
      context: PoolContext;
      /** History entries this snapshot added (usually none or one). */
      transitions: PoolTransition[];
      /** The pool's lease was live and no longer is. */
      leaseLapsed: boolean;
    }
  | { kind: 'stopped'; key: string };

export type PoolChangeListener = (change: PoolChange) => void;

interface ActorMemory {
  lease: PoolContext['lease'];
  lastEntry: PoolTransition | undefined;
  /** Targeted transitions taken by the macrostep in progress, in order. */
  taken: AnyTransitionDefinition[];
}

export interface PoolInspectorOptions {
  /** Only snapshots of machines with this id are pool actors (default `pool`). */
  machineId?: string;
}

export class PoolInspector {
  private readonly listeners = new Set<PoolChangeListener>();
  private readonly actors = new Map<unknown, ActorMemory>();
  /** Keyed by the history entry itself, so a cause is forgotten with its entry (bounded like the history). */
  private readonly causes = new WeakMap<PoolTransition, EventFacts>();
  private readonly machineId: string;

  constructor(options: PoolInspectorOptions = {}) {
    this.machineId = options.machineId ?? 'pool';
  }

  /** The `inspect` option for createActor (bound: pass it as is). */
  readonly inspect = (event: InspectionEvent): void => {
    if (event.type === '@xstate.microstep') {
      if (!this.isPoolSnapshot(event.snapshot)) return;
      const memory = this.memoryOf(event.actorRef);
      for (const transition of event._transitions) if (transition.target?.length) memory.taken.push(transition);
      return;
    }
    if (event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot;
    if (!this.isPoolSnapshot(snapshot)) return;
    const context = snapshot.context;
    if (snapshot.status === 'stopped') {
      this.actors.delete(event.actorRef);
      this.emit({ kind: 'stopped', key: context.key });
      return;
    }
    const memory = this.memoryOf(event.actorRef);
    const transitions = entriesAfter(context.history, memory.lastEntry);
    for (const entry of transitions) {
      const index = memory.taken.findIndex((t) => stateKeyOf(t.source.id) === entry.from && stateKeyOf(t.target![0]!.id) === entry.to);
      const taken = index >= 0 ? memory.taken.splice(index, 1)[0] : undefined;
      // The facts only: put in words when /debug asks (causes.ts).
      this.causes.set(entry, eventFacts(event.event as AnyEventObject, taken ?? null));
    }
    const leaseLapsed = memory.lease === 'live' && context.lease !== 'live';
    memory.lease = context.lease;
    memory.lastEntry = context.history.at(-1) ?? memory.lastEntry;
    memory.taken = [];
    this.emit({ kind: 'snapshot', key: context.key, context, transitions, leaseLapsed });
  };

  /** Why the pool took this transition, if it was observed. */
  causeOf(entry: PoolTransition): TransitionCause | undefined {
    const kept = this.causes.get(entry);
    if (!kept) return undefined;
    const { taken } = kept;
    return { transition: taken ? transitionId(taken) : null, guard: taken ? guardName(taken.guard) : null, detail: describeFacts(kept) };
  }

  subscribe(listener: PoolChangeListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private isPoolSnapshot(snapshot: unknown): snapshot is { status: string; context: PoolContext } {
    const s = snapshot as { machine?: { id?: string }; context?: unknown };
    return s.machine?.id === this.machineId && isPoolContext(s.context);
  }

  private memoryOf(actorRef: unknown): ActorMemory {
    let memory = this.actors.get(actorRef);
    if (!memory) {
      memory = { lease: 'none', lastEntry: undefined, taken: [] };
      this.actors.set(actorRef, memory);
    }
    return memory;
  }

  private emit(change: PoolChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

/** The entries after `last` (all of them when `last` is not there any more, or was never seen). */
function entriesAfter(history: PoolTransition[], last: PoolTransition | undefined): PoolTransition[] {
  if (!last) return [...history];
  const index = history.lastIndexOf(last);
  return index < 0 ? [...history] : history.slice(index + 1);
}

function isPoolContext(context: unknown): context is PoolContext {
  return typeof context === 'object' && context !== null && 'key' in context && 'history' in context && 'lease' in context;
}
