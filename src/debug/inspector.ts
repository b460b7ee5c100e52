// The pools' steps (PoolDirectory's `inspect`), turned into what /debug and the metrics want to know: which
// pool changed, which transitions it took and why (the event that came in and the guarded transition the
// chart chose, as XState's microsteps report it), whether its lease just lapsed, and when it was forgotten.
// Each step carries the snapshot before it, so nothing is kept per pool here but the causes.
import type { AnyEventObject } from 'xstate';
import type { PoolContext, PoolTransition } from '../../machines/pool.machine.js';
import type { PoolStep } from '../join/pool-directory.js';
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

export class PoolInspector {
  private readonly listeners = new Set<PoolChangeListener>();
  /** Keyed by the history entry itself, so a cause is forgotten with its entry (bounded like the history). */
  private readonly causes = new WeakMap<PoolTransition, EventFacts>();

  /** The `inspect` option of the PoolDirectory (bound: pass it as is). */
  readonly inspect = (step: PoolStep): void => {
    if (step.kind === 'stopped') {
      this.emit({ kind: 'stopped', key: step.key });
      return;
    }
    const context = step.snapshot.context;
    const previous = step.before?.context;
    const transitions = entriesAfter(context.history, previous?.history.at(-1));
    const taken = [...step.taken];
    for (const entry of transitions) {
      const index = taken.findIndex((t) => stateKeyOf(t.source.id) === entry.from && stateKeyOf(t.target![0]!.id) === entry.to);
      const chosen = index >= 0 ? taken.splice(index, 1)[0] : undefined;
      // The facts only: put in words when /debug asks (causes.ts).
      this.causes.set(entry, eventFacts(step.event as AnyEventObject, chosen ?? null));
    }
    const leaseLapsed = previous?.lease === 'live' && context.lease !== 'live';
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
