// The actor system: one pool.machine actor per pool key, spawned on first sight, fed with lease and
// slice events, its warnings provided here (the machine itself does no I/O). A pool that left stays
// for /debug with its last state and history for `retentionMs` (bounded in number), then its actor stops.
import { createActor, type Actor, type InspectionEvent, type SnapshotFrom } from 'xstate';
import type { Logger } from 'pino';
import { poolMachine, type PoolContext, type PoolEvent, type PoolMode } from '../../machines/pool.machine.js';
import type { PoolKey, PoolState } from '../contract/index.js';
import { stuckWarning, frontendlessWarning, type WarningKind } from './warnings.js';

export type PoolActor = Actor<typeof poolMachine>;
export type PoolSnapshot = SnapshotFrom<typeof poolMachine>;

export interface PoolDirectoryOptions {
  mode: PoolMode;
  leaseMs: number;
  logger: Logger;
  /** Names used in the frontendless warning (MCS modes). */
  frontendServiceSuffix: string;
  frontendPortName: string;
  /** Wall clock (ms) stamped on every event; injectable for tests. */
  now?: () => number;
  /** xstate clock for the machines' delays (SimulatedClock in tests). */
  clock?: { setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown; clearTimeout(id: unknown): void };
  /** How long a pool that left stays visible in /debug (default ten minutes). */
  retentionMs?: number;
  /** At most this many left pools are kept; the oldest go first (default 10,000). */
  maxRetained?: number;
  historyLimit?: number;
  /** Every snapshot of every pool actor (the join derives the listed view from it). */
  onSnapshot: (key: PoolKey, snapshot: PoolSnapshot) => void;
  /** Every warning logged, by kind (for metrics). */
  onWarning?: (kind: WarningKind) => void;
  /** XState inspection events of every actor (for the debug page). */
  inspect?: (event: InspectionEvent) => void;
}

/** A pool has left when neither side lists it: `absent`, or `lapsed` in registrations mode. */
export function hasLeft(mode: PoolMode, state: PoolState): boolean {
  return state === 'absent' || (mode === 'registrations' && state === 'lapsed');
}

export class PoolDirectory {
  private readonly actors = new Map<PoolKey, PoolActor>();
  /** Left pools in the order they left: key → when (ms). */
  private readonly left = new Map<PoolKey, number>();
  private readonly machine;
  private readonly now: () => number;
  private readonly retentionMs: number;
  private readonly maxRetained: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PoolDirectoryOptions) {
    this.now = options.now ?? Date.now;
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
    for (const actor of this.actors.values()) actor.stop();
    this.actors.clear();
    this.left.clear();
  }

  /** Send an event to a pool's actor, spawning it on first sight. `at` is stamped here. */
  send(key: PoolKey, event: DistributiveOmit<PoolEvent, 'at'>): void {
    const actor = this.actors.get(key) ?? this.spawn(key);
    actor.send({ ...event, at: this.now() } as PoolEvent);
  }

  /** Send only to a pool that exists (a lapse of a pool this replica never saw spawns nothing). */
  sendIfKnown(key: PoolKey, event: DistributiveOmit<PoolEvent, 'at'>): void {
    if (this.actors.has(key)) this.send(key, event);
  }

  get(key: PoolKey): PoolActor | undefined {
    return this.actors.get(key);
  }

  keys(): IterableIterator<PoolKey> {
    return this.actors.keys();
  }

  get size(): number {
    return this.actors.size;
  }

  /** Every pool's context, keyed. */
  contexts(): Map<PoolKey, PoolContext> {
    const out = new Map<PoolKey, PoolContext>();
    for (const [key, actor] of this.actors) out.set(key, actor.getSnapshot().context);
    return out;
  }

  /** Forget left pools past retention, and the oldest beyond the bound. */
  forgetLeft(): void {
    const cutoff = this.now() - this.retentionMs;
    for (const [key, at] of this.left) {
      if (at > cutoff && this.left.size <= this.maxRetained) break;
      this.left.delete(key);
      this.actors.get(key)?.stop();
      this.actors.delete(key);
    }
  }

  private spawn(key: PoolKey): PoolActor {
    const actor = createActor(this.machine, {
      input: {
        key,
        mode: this.options.mode,
        leaseMs: this.options.leaseMs,
        at: this.now(),
        historyLimit: this.options.historyLimit,
      },
      // Spread only when set: xstate merges options over its defaults, so an undefined clock would win.
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      ...(this.options.inspect ? { inspect: this.options.inspect } : {}),
    });
    this.actors.set(key, actor);
    actor.subscribe((snapshot) => {
      const state = snapshot.value as PoolState;
      if (hasLeft(this.options.mode, state)) {
        if (!this.left.has(key)) this.left.set(key, this.now());
        if (this.left.size > this.maxRetained) this.forgetLeft();
      } else {
        this.left.delete(key);
      }
      this.options.onSnapshot(key, snapshot);
    });
    actor.start();
    return actor;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
