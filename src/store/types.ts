// The RegistrationStore: where leases live (docs/design.md "The store"). One interface, two
// implementations (memory for one replica, Redis for many), one contract suite for both. LeaseReader is
// its read-only half, all a replica needs to follow another region's store.
import type { PoolKey, Registration } from '../contract/index.js';

/**
 * A live lease as the store holds it. `R` is what was registered: a pool's registration, or a router's
 * (docs/contract.md §10: router leases live in the same store, under keys of their own).
 */
export interface LeaseRecord<R = Registration> {
  key: PoolKey;
  registration: R;
  renewedAtMs: number;
  leaseMs: number;
  /** renewedAtMs + leaseMs */
  deadlineMs: number;
  /**
   * Grows with each change of the registration's content (not on a plain renewal): by one, or to one above
   * the highest version its writer knew in other regions (RegistrationStore.heartbeat's `knownVersion`).
   */
  version: number;
  /**
   * When the registration's content last changed (the lease began, or its content changed), on the store's
   * clock; a plain renewal leaves it. Shown in /debug; never compared across regions (their clocks differ:
   * `version` picks the registration shown, docs/contract.md §7).
   */
  changedAtMs: number;
}

/** One entry of the change log. `position` identifies it; watching from it yields what follows. */
export type LeaseEvent<R = Registration> =
  | { type: 'upsert'; position: string; record: LeaseRecord<R> }
  | { type: 'lapse'; position: string; key: PoolKey; atMs: number };

export interface StoreSnapshot<R = Registration> {
  /** Every live lease. */
  records: LeaseRecord<R>[];
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

/** Where a snapshot's leases go as they are read (LeaseReader.snapshot). */
export type SnapshotParts<R = Registration> = (records: LeaseRecord<R>[]) => void;

/**
 * The epoch a reader reports while the store has none written (StoreSnapshot.epoch): it names no data
 * lifetime, so an epoch written after it is not a loss of data (see the Redis reader's snapshot).
 */
export const UNWRITTEN_EPOCH = 'unwritten';

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
export interface LeaseReader<R = Registration> {
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
   *
   * `onRead`, when given, is handed leases as the read finds them, part by part, before the snapshot
   * settles, so a caller can apply them while the rest is read (docs/design.md "Snapshots that scale with
   * bytes"). Each is live as the read began; together they are not yet a consistent state, the settled
   * `records` are: a lease handed over and not changed since is the same object in `records`, and one
   * handed over but not in `records` has no live lease. A store may hand nothing over.
   */
  snapshot(onRead?: SnapshotParts<R>): Promise<StoreSnapshot<R>>;
  /**
   * The changes after `position`, in order, until `signal` aborts (then it returns).
   * Throws PositionLostError when the log no longer reaches back to `position` (re-read a snapshot),
   * StoreUnavailableError when the store cannot be read (for Redis: within the command timeout plus at
   * most 150 ms, the XREAD window, also on a path that holds every byte). `epoch` is the snapshot's: a
   * store whose epoch is no longer it (its data flushed or replaced under traffic) ends the watch with
   * PositionLostError, and one whose log lost the position without being trimmed (a restore) with
   * StoreReplacedError, so the caller reads a snapshot again.
   *
   * `reached`, when given, is called once the first read of the log found that it still reaches back to
   * `position`, before any event is yielded, and awaited: a follower resuming its log after a failure
   * (rather than reading a snapshot) learns there that the store answers and its view is still good.
   */
  watch(position: string, signal: AbortSignal, epoch?: string, reached?: () => Promise<void>): AsyncIterable<LeaseEvent<R>>;
  /**
   * The leases whose deadline is at least `graceMs` (default 0) in the past on the store's own clock, soonest
   * first, read without lapsing them (nothing is logged or removed): a follower treats them as lapsed even
   * when no replica of their region sweeps. A lease that a sweep has lapsed is no longer listed. Every
   * due lease is returned (Redis reads them in pages of 10,000, one short script call each).
   */
  dueLapses(graceMs?: number): Promise<DueLapse[]>;
  /**
   * The renewal window of the store as this reader applies it (docs/contract.md §9): the last outage its
   * writers recorded and whether its window is open. A store that has no outages (memory) has none.
   */
  renewalWindow?(): Promise<RenewalWindowStatus>;
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

/** An outage of the store that its writers lived through and recorded, on the store's clock (ms). */
export interface StoreOutage {
  startMs: number;
  endMs: number;
  /** The renewal window that follows it: leases due from its start until end + window lapse no sooner. */
  windowMs: number;
  /** Leases whose deadline falls within the outage or its window, when read. */
  covered: number;
}

export interface RenewalWindowStatus {
  /** The store's clock when read. */
  nowMs: number;
  /** The writers' latest stamp; undefined when none was ever written. */
  stampMs: number | undefined;
  lastOutage: StoreOutage | undefined;
  /** The last outage's window has not run yet. */
  open: boolean;
  /** Some lease due now is held back (an open window, or a stale stamp of writers not known gone). */
  holding: boolean;
}

/** Counters a store keeps (docs/operations.md "Metrics"). */
export interface StoreStats {
  /** Attempts to open a connection again after one was lost or dropped as dead. */
  reconnects: number;
  /** Entries this version cannot read (a change log entry, a pool's hash), each skipped (docs/contract.md §8). */
  unreadableEntries: number;
}

/** The home region's store: a LeaseReader that also takes heartbeats and sweeps. */
export interface RegistrationStore<R = Registration> extends LeaseReader<R> {
  /**
   * Renew (or create) the pool's lease. `canonical` is canonicalJson(registration) when the caller already
   * wrote it (the heartbeat route does, as it validates); without it the store writes it. Throws
   * StoreUnavailableError when the store cannot answer in time. `knownVersion` (default 0): the highest
   * version of the pool's registration the caller knows in any region; a new lease or a content change
   * takes a version above it and above the lease's own (docs/contract.md §7: versions order content
   * changes across regions).
   */
  heartbeat(registration: R, canonical?: string, knownVersion?: number): Promise<HeartbeatResult>;
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
  override readonly name: string = 'StoreUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The store answered, but with data known to be stale (a read replica cut off from its master): it counts
 * as a store that cannot be read, and nothing is lapsed from it (docs/contract.md §7).
 */
export class StaleDataError extends StoreUnavailableError {
  override readonly name: string = 'StaleDataError';
}

/** `error`, or an error it was caused by, is a StaleDataError (a store wraps what its commands throw). */
export function isStaleData(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth += 1) {
    if (at instanceof StaleDataError) return true;
  }
  return false;
}

export class PositionLostError extends Error {
  override readonly name: string = 'PositionLostError';
  constructor(readonly position: string) {
    super(`the change log no longer reaches back to position ${position}`);
  }
}

/**
 * The log lost entries a follower had read although it was not trimmed past them: the store's data was
 * replaced (a restore of an older copy, a failover that lost the tail), possibly with its epoch intact.
 * A follower re-reads a snapshot and treats it as a loss of data (leases still being renewed may be missing).
 */
export class StoreReplacedError extends PositionLostError {
  override readonly name: string = 'StoreReplacedError';
}
