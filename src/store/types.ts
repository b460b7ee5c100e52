// The RegistrationStore: where leases live (docs/design.md "The store"). One interface, two
// implementations (memory for one replica, Redis for many), one contract suite for both. LeaseReader is
// its read-only half, all a replica needs to follow another region's store.
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
  /**
   * When the registration's content last changed (the lease began, or its content changed), on the store's
   * clock; a plain renewal leaves it. Of the same pool leased in several regions, the latest content
   * change is shown (docs/contract.md §7).
   */
  changedAtMs: number;
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

/** A lease whose deadline has passed on the store's clock, whether or not a sweep logged its lapse yet. */
export interface DueLapse {
  key: PoolKey;
  /** The lease's deadline (store clock, ms): when it ran out, not when someone noticed. */
  atMs: number;
}

/**
 * What a replica needs to follow a store it never writes to: another region's Redis, possibly through a
 * read-only Redis replica of it (docs/design.md "Scale and regions"). Every method only reads.
 */
export interface LeaseReader {
  readonly kind: 'memory' | 'redis';
  /**
   * True for a store that forgets on restart: a replica that starts cannot know leases still being renewed,
   * so its view is incomplete for one lease after start (docs/contract.md §5).
   */
  readonly forgetsOnRestart: boolean;
  /**
   * Every live lease and the log position it is consistent with. Never holds a lease whose deadline has
   * passed on the store's clock (`nowMs`), swept or not: its lapse may still follow in the log.
   * Throws StoreUnavailableError when the store cannot answer in time.
   */
  snapshot(): Promise<StoreSnapshot>;
  /**
   * The changes after `position`, in order, until `signal` aborts (then it returns).
   * Throws PositionLostError when the log no longer reaches back to `position` (re-read a snapshot),
   * StoreUnavailableError when the store cannot be read (for Redis: within the command timeout plus at
   * most 150 ms, the XREAD window, also on a path that holds every byte).
   */
  watch(position: string, signal: AbortSignal): AsyncIterable<LeaseEvent>;
  /**
   * The leases whose deadline is at least `graceMs` (default 0) in the past on the store's own clock, soonest
   * first, read without lapsing them (nothing is logged or removed): a follower treats them as lapsed even
   * when no replica of their region sweeps. A lease that a sweep has lapsed is no longer listed. Every
   * due lease is returned (Redis reads them in pages of 10,000, one short script call each).
   */
  dueLapses(graceMs?: number): Promise<DueLapse[]>;
  /**
   * Calls `listener` each time the store answers again after a failed command (a heartbeat or a sweep
   * counts), so a feed waiting out its backoff reads at once. Returns the unsubscribe function. A store
   * that cannot fail has none.
   */
  onAvailable?(listener: () => void): () => void;
  /** What the store counted since it was opened (for /metrics); a store with nothing to count has none. */
  stats?(): StoreStats;
  close(): Promise<void>;
}

/** Counters a store keeps (docs/operations.md "Metrics"). */
export interface StoreStats {
  /** Attempts to open a connection again after one was lost or dropped as dead. */
  reconnects: number;
  /** Entries this version cannot read (a change log entry, a pool's hash), each skipped (docs/contract.md §8). */
  unreadableEntries: number;
}

/** The home region's store: a LeaseReader that also takes heartbeats and sweeps. */
export interface RegistrationStore extends LeaseReader {
  /**
   * Renew (or create) the pool's lease. `canonical` is canonicalJson(registration) when the caller already
   * wrote it (the heartbeat route does, as it validates); without it the store writes it. Throws
   * StoreUnavailableError when the store cannot answer in time.
   */
  heartbeat(registration: Registration, canonical?: string): Promise<HeartbeatResult>;
  /** Lapse every lease whose deadline passed on the store's clock; each lapse is logged once. */
  sweep(): Promise<SweepResult>;
}

/** What a sweep did, and when the next one has something to do. */
export interface SweepResult {
  /** Leases this sweep lapsed. */
  lapsed: number;
  /**
   * Milliseconds from when sweep() returned until the soonest deadline still held runs out (the store's
   * clock, taken as a duration, so the replica's clock offset does not matter; 0 when it already has);
   * undefined when no lease is held. A renewal may move it later; a new lease never comes sooner than its
   * lease. The sweeper times its next sweep by it (docs/design.md "The store").
   */
  nextDueInMs: number | undefined;
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
