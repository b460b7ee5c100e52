// The pools: one pool.machine snapshot per pool key (not an actor: docs/design.md "The actors"), created on
// first sight, moved by the machine's pure transition for every lease and slice event, its actions run
// here: the warnings provided below, and the delayed events (the stuck warnings' timers) scheduled on the
// clock and cancelled as the machine's own `after` would be. A pool that left stays for /debug with its
// last state and history for `retentionMs` (bounded in number), then it is forgotten.
import { createActor, type AnyActorScope, type AnyEventObject, type AnyTransitionDefinition, type ExecutableActionObject, type SnapshotFrom } from 'xstate';
import type { Logger } from 'pino';
import {
  classify,
  entered,
  initialContext,
  leaseUpserted,
  poolMachine,
  type PoolContext,
  type PoolEvent,
  type PoolInput,
  type PoolMode,
} from '../../machines/pool.machine.js';
import type { PoolKey, PoolState } from '../contract/index.js';
import { stuckWarning, frontendlessWarning, type WarningKind } from './warnings.js';

export type PoolSnapshot = SnapshotFrom<typeof poolMachine>;

/** One pool read like an actor (`getSnapshot()`), for callers that only read. */
export interface PoolRef {
  getSnapshot(): PoolSnapshot;
}

/**
 * What /debug learns of each pool (PoolInspector): every event it took, with the snapshots before (none
 * for a new pool) and after and the chart's targeted transitions taken, in order; and when it is forgotten.
 */
export type PoolStep =
  | {
      kind: 'step';
      key: PoolKey;
      event: AnyEventObject;
      before: PoolSnapshot | undefined;
      snapshot: PoolSnapshot;
      taken: readonly AnyTransitionDefinition[];
    }
  | { kind: 'stopped'; key: PoolKey };

export interface Clock {
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export interface PoolDirectoryOptions {
  mode: PoolMode;
  leaseMs: number;
  logger: Logger;
  /** Names used in the frontendless warning (MCS modes). */
  frontendServiceSuffix: string;
  frontendPortName: string;
  /** Wall clock (ms) stamped on every event; injectable for tests. */
  now?: () => number;
  /** The clock of the machines' delays (xstate's SimulatedClock in tests). */
  clock?: Clock;
  /** How long a pool that left stays visible in /debug (default ten minutes). */
  retentionMs?: number;
  /** At most this many left pools are kept; the oldest go first (default 10,000). */
  maxRetained?: number;
  historyLimit?: number;
  /** Every new snapshot of every pool (the join derives the listed view from it). */
  onSnapshot: (key: PoolKey, snapshot: PoolSnapshot) => void;
  /** Every warning logged, by kind (for metrics). */
  onWarning?: (kind: WarningKind) => void;
  /** Every step of every pool (for the debug page). */
  inspect?: (step: PoolStep) => void;
}

/** A pool has left when neither side lists it: `absent`, or `lapsed` in registrations mode. */
export function hasLeft(mode: PoolMode, state: PoolState): boolean {
  return state === 'absent' || (mode === 'registrations' && state === 'lapsed');
}

const REAL_CLOCK: Clock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

type UpsertEvent = Extract<PoolEvent, { type: 'LEASE_UPSERT' }>;

export class PoolDirectory {
  private readonly snapshots = new Map<PoolKey, PoolSnapshot>();
  /** The delayed events each pool's transitions scheduled and did not cancel yet: key → (id → timer). */
  private readonly delayed = new Map<PoolKey, Map<string, unknown>>();
  /** Left pools in the order they left: key → when (ms). */
  private readonly left = new Map<PoolKey, number>();
  private readonly machine;
  private readonly now: () => number;
  private readonly clock: Clock;
  private readonly retentionMs: number;
  private readonly maxRetained: number;
  /** One actor scope for every transition: the machine's pure transition collects its actions here. */
  private readonly scope: AnyActorScope;
  // Stryker disable next-line ArrayDeclaration: reset before every use
  private actions: ExecutableActionObject[] = [];
  // Stryker disable next-line ArrayDeclaration: reset before every use
  private taken: AnyTransitionDefinition[] = [];
  /** The transition out of `absent` into each state whose entry has no effect (a pool may start there). */
  private readonly quietEntries: ReadonlyMap<PoolState, AnyTransitionDefinition>;
  private readonly templates = new Map<PoolState, PoolSnapshot>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PoolDirectoryOptions) {
    this.now = options.now ?? Date.now;
    this.clock = options.clock ?? REAL_CLOCK;
    this.retentionMs = options.retentionMs ?? 10 * 60_000;
    this.maxRetained = options.maxRetained ?? 10_000;
    const { logger, onWarning } = options;
    this.machine = poolMachine.provide({
      actions: {
        warnStuck: ({ context }, params) => {
          const { fields, message } = stuckWarning(context, params.state);
          logger.warn(fields, message);
          onWarning?.(`stuck_${params.state.replace('-', '_')}` as WarningKind);
        },
        warnFrontendless: ({ context }) => {
          const { fields, message } = frontendlessWarning(context, {
            frontendServiceSuffix: options.frontendServiceSuffix,
            frontendPortName: options.frontendPortName,
          });
          logger.warn(fields, message);
          onWarning?.('frontendless');
        },
      },
    });
    // The scope's own actor is never started; created with `inspect`, its system reports each microstep's
    // transitions, which is how the chart's choice (transition and guard) reaches /debug.
    const self = createActor(this.machine, {
      // Stryker disable next-line StringLiteral: this actor is never started nor sent an event; its input only satisfies the type
      input: this.inputOf('', 0),
      inspect: (event) => {
        if (event.type !== '@xstate.microstep') return;
        for (const transition of event._transitions) if (transition.target?.length) this.taken.push(transition);
      },
    });
    this.scope = {
      self,
      // Stryker disable next-line StringLiteral: read by no action of the chart
      id: '',
      // Stryker disable next-line StringLiteral: read by no action of the chart
      sessionId: '',
      logger: () => {},
      defer: () => {},
      emit: () => {},
      stopChild: () => {},
      system: self.system,
      actionExecutor: (action) => this.actions.push(action),
    };
    this.quietEntries = quietEntries(this.machine);
  }

  /** Starts the timer that forgets pools that left long ago. */
  start(): void {
    const every = Math.max(1000, Math.min(this.retentionMs / 10, 10_000));
    this.timer = setInterval(() => this.forgetLeft(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const key of [...this.snapshots.keys()]) this.forget(key);
    this.left.clear();
  }

  /** Send an event to a pool, creating it on first sight. `at` is stamped here. */
  send(key: PoolKey, event: DistributiveOmit<PoolEvent, 'at'>): void {
    const stamped = { ...event, at: this.now() } as PoolEvent;
    const before = this.snapshots.get(key);
    if (before) {
      this.step(key, before, stamped);
      return;
    }
    if (stamped.type === 'LEASE_UPSERT' && this.startFromLease(key, stamped)) return;
    this.actions = [];
    const initial = this.machine.getInitialSnapshot(this.scope, this.inputOf(key, stamped.at));
    this.runActions(key, this.actions);
    this.step(key, initial, stamped, true);
  }

  /** Send only to a pool that exists (a lapse of a pool this replica never saw creates nothing). */
  sendIfKnown(key: PoolKey, event: DistributiveOmit<PoolEvent, 'at'>): void {
    if (this.snapshots.has(key)) this.send(key, event);
  }

  /** The pool's current snapshot. */
  snapshot(key: PoolKey): PoolSnapshot | undefined {
    return this.snapshots.get(key);
  }

  /** The pool, read like an actor. */
  get(key: PoolKey): PoolRef | undefined {
    if (!this.snapshots.has(key)) return undefined;
    return { getSnapshot: () => this.snapshots.get(key)! };
  }

  keys(): IterableIterator<PoolKey> {
    return this.snapshots.keys();
  }

  get size(): number {
    return this.snapshots.size;
  }

  /** How many pools wait for a delayed event (a stuck warning's timer). */
  get pendingDelays(): number {
    return this.delayed.size;
  }

  /** Every pool's context, keyed. */
  contexts(): Map<PoolKey, PoolContext> {
    const out = new Map<PoolKey, PoolContext>();
    for (const [key, snapshot] of this.snapshots) out.set(key, snapshot.context);
    return out;
  }

  /** Forget left pools past retention, and the oldest beyond the bound. */
  forgetLeft(): void {
    const cutoff = this.now() - this.retentionMs;
    for (const [key, at] of this.left) {
      if (at > cutoff && this.left.size <= this.maxRetained) break;
      this.left.delete(key);
      this.forget(key);
    }
  }

  /**
   * A pool first seen through its lease starts in the state the facts call for, without running the
   * machine (resolveState: about a tenth of a transition's cost, which counts when a new replica reads
   * 100,000 leases), when that state's entry has no effect to run. The context is what the machine's own
   * actions assign (the test pins both paths to the same snapshot).
   */
  private startFromLease(key: PoolKey, event: UpsertEvent): boolean {
    // One fresh object, assigned in the machine's order (the lease, then the entry): nothing shares it yet.
    const context = initialContext(this.inputOf(key, event.at));
    Object.assign(context, leaseUpserted(context, event));
    const state = classify(context);
    const taken = this.quietEntries.get(state);
    if (!taken) return false;
    Object.assign(context, entered(context, event, state));
    this.commit(key, undefined, event, this.resolved(state, context), [taken]);
    return true;
  }

  /**
   * `resolveState({ value: state, context })`, resolved once per state: the snapshot of a state differs
   * between pools only by its context, and XState treats snapshots as immutable (every step makes a new
   * one), so the rest (its state nodes, tags, history value) is shared, as XState's own clones share it.
   */
  private resolved(state: PoolState, context: PoolContext): PoolSnapshot {
    let template = this.templates.get(state);
    if (!template) this.templates.set(state, (template = this.machine.resolveState({ value: state, context })));
    return { ...template, context };
  }

  private step(key: PoolKey, before: PoolSnapshot, event: AnyEventObject, isNew = false): void {
    this.actions = [];
    this.taken = [];
    const next = this.machine.transition(before, event as PoolEvent, this.scope);
    const { actions, taken } = this;
    this.runActions(key, actions);
    this.commit(key, isNew ? undefined : before, event, next, taken);
  }

  private commit(key: PoolKey, before: PoolSnapshot | undefined, event: AnyEventObject, snapshot: PoolSnapshot, taken: AnyTransitionDefinition[]): void {
    this.snapshots.set(key, snapshot);
    if (hasLeft(this.options.mode, snapshot.value as PoolState)) {
      if (!this.left.has(key)) this.left.set(key, this.now());
      if (this.left.size > this.maxRetained) this.forgetLeft();
    } else {
      this.left.delete(key);
    }
    this.options.onSnapshot(key, snapshot);
    this.options.inspect?.({ kind: 'step', key, event, before, snapshot, taken });
  }

  /** The actions a transition returned: delayed events scheduled or cancelled, the warnings run. */
  private runActions(key: PoolKey, actions: readonly ExecutableActionObject[]): void {
    for (const action of actions) {
      if (action.type === 'xstate.raise') {
        // Only a delayed raise is returned to run (an immediate one is taken within the step); the chart's
        // come from its `after` transitions, each with the id its state's exit cancels.
        const { event, id, delay } = action.params as { event: AnyEventObject; id: string; delay: number };
        this.schedule(key, id, event, delay);
      } else if (action.type === 'xstate.cancel') {
        this.cancel(key, (action.params as { sendId: string }).sendId);
      } else {
        // Every other action returned to run has its function: a provided warning, or a built-in's.
        action.exec!(action.info, action.params);
      }
    }
  }

  /** As XState's scheduler: the event is delivered after `delay` unless its id is cancelled first. */
  private schedule(key: PoolKey, id: string, event: AnyEventObject, delay: number): void {
    const timers = this.delayed.get(key) ?? new Map<string, unknown>();
    this.delayed.set(key, timers);
    const timer = this.clock.setTimeout(() => {
      this.dropTimer(key, id);
      // A pool's timers are cleared when it is forgotten, so the pool is still here.
      this.step(key, this.snapshots.get(key)!, event);
    }, delay);
    timers.set(id, timer);
  }

  private cancel(key: PoolKey, id: string): void {
    this.clock.clearTimeout(this.delayed.get(key)?.get(id));
    this.dropTimer(key, id);
  }

  private dropTimer(key: PoolKey, id: string): void {
    const timers = this.delayed.get(key);
    timers?.delete(id);
    // Stryker disable next-line ConditionalExpression: each state of the chart has at most one delayed event, so a pool never waits for two
    if (timers?.size === 0) this.delayed.delete(key);
  }

  private forget(key: PoolKey): void {
    const timers = this.delayed.get(key);
    if (timers) for (const timer of timers.values()) this.clock.clearTimeout(timer);
    this.delayed.delete(key);
    this.snapshots.delete(key);
    this.options.inspect?.({ kind: 'stopped', key });
  }

  private inputOf(key: PoolKey, at: number): PoolInput {
    return { key, mode: this.options.mode, leaseMs: this.options.leaseMs, at, historyLimit: this.options.historyLimit };
  }
}

/**
 * For each state whose entry only assigns (no warning, no timer), the chart's eventless transition from
 * `absent` into it: a pool may start there from its first lease without the machine running its entry.
 */
export function quietEntries(machine: typeof poolMachine): Map<PoolState, AnyTransitionDefinition> {
  const implementations = machine.implementations.actions as Record<string, { type?: string } | undefined>;
  // An entry action named by an object whose implementation is an `assign`. Anything else (a built-in such
  // as a delayed raise, a provided effect) counts as an effect, and so does an action named by a bare
  // string: a state may only be thought effect-free, never the other way round.
  const assigns = (action: unknown): boolean => implementations[String((action as { type?: unknown }).type)]?.type === 'xstate.assign';
  const out = new Map<PoolState, AnyTransitionDefinition>();
  for (const transition of machine.root.states.absent!.always!) {
    const target = transition.target![0]!;
    if (target.entry.every(assigns)) out.set(target.key as PoolState, transition);
  }
  return out;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
