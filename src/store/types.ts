// The RegistrationStore: where leases live (DESIGN.md "The store"). One interface, two
// implementations (memory for one replica, Redis for many), one contract suite for both.
import type { PoolKey, Registration } from '../contract/index.js';

/** A live lease as the store holds it. Times are on the store's clock (Redis TIME), in ms. */
export interface LeaseRecord {
  key: PoolKey;
  registration: Registration;
  renewedAtMs: number;
  leaseMs: number;
  /** renewedAtMs + leaseMs */
  deadlineMs: number;
  /** Grows by one each time the registration's content changes (not on a plain renewal). */
  version: number;
}

/** One entry of the change log. `position` identifies it; watching from it yields what follows. */
export type LeaseEvent =
  | { type: 'upsert'; position: string; record: LeaseRecord }
  | { type: 'lapse'; position: string; key: PoolKey; atMs: number };

export interface StoreSnapshot {
  /** Every live lease. */
  records: LeaseRecord[];
  /** The change log position the snapshot is consistent with: watch(position) yields every later change. */
  position: string;
  /** The store's clock when the snapshot was read. */
  nowMs: number;
  /**
   * Names the store's data lifetime: it changes when the store lost its data (a Redis restarted without
   * persistence, a failover that lost writes). A replica that sees it change knows the leases PoolRelays
   * are still renewing may be missing for up to one lease, and must not drop them as lapsed meanwhile.
   */
  epoch: string;
}

export interface HeartbeatResult {
  key: PoolKey;
  leaseMs: number;
  /** true when the registration was new or its content changed (an `upsert` was logged). */
  changed: boolean;
}

export interface RegistrationStore {
  readonly kind: 'memory' | 'redis';
  /**
   * True for a store that forgets on restart: a replica that starts cannot know leases still being renewed,
   * so its view is incomplete for one lease after start (CONTRACT.md §5).
   */
  readonly forgetsOnRestart: boolean;
  /** Renew (or create) the pool's lease. Throws StoreUnavailableError when the store cannot answer in time. */
  heartbeat(registration: Registration): Promise<HeartbeatResult>;
  /** Every live lease and the log position it is consistent with. */
  snapshot(): Promise<StoreSnapshot>;
  /**
   * The changes after `position`, in order, until `signal` aborts (then it returns).
   * Throws PositionLostError when the log no longer reaches back to `position` (re-read a snapshot),
   * StoreUnavailableError when the store cannot be read.
   */
  watch(position: string, signal: AbortSignal): AsyncIterable<LeaseEvent>;
  /** Lapse every lease whose deadline passed on the store's clock; each lapse is logged once. Returns how many. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class PositionLostError extends Error {
  override readonly name = 'PositionLostError';
  constructor(readonly position: string) {
    super(`the change log no longer reaches back to position ${position}`);
  }
}
