// One region's store as the join sees it (docs/design.md "Scale and regions"): a StoreFeed that follows
// it, the store's data lifetime (its epoch: a store that lost its data is refilled for one lease before
// pools it lacks lapse), and, for a region this replica only follows, the hold: a region that cannot be
// read keeps its pools for `holdMs`, then they are dropped until it is read again (docs/contract.md §7).
// Without regions the one store is a region named '' that is never dropped.
import type { Logger } from 'pino';
import type { DueLapse, LeaseEvent, LeaseReader, RegistrationStore, StoreSnapshot } from '../store/types.js';
import type { BackoffOptions } from '../util/backoff.js';
import { StoreFeed } from './store-feed.js';

export interface RegionFeedSink {
  /** A full read of the region. `holdMissing`: the store is being refilled, so pools it lacks are kept. */
  snapshot(region: string, snapshot: StoreSnapshot, holdMissing: boolean): void | Promise<void>;
  event(region: string, event: LeaseEvent): void;
  due(region: string, lapses: DueLapse[]): void;
  /** The region's status changed (readable, refilling, held, dropped). */
  status(region: string): void;
  /**
   * The hold ran out: every lease of the region counts as gone on this replica. Resolves true once every
   * pool has been dropped, false when the drop ended early (a snapshot of the region came meanwhile).
   */
  drop(region: string): boolean | Promise<boolean>;
}

export interface RegionFeedOptions {
  /** The region's name; '' without regions. */
  region: string;
  store: LeaseReader;
  /** The home region's store: this replica sweeps it and the region is never dropped. */
  home?: RegistrationStore;
  /** How long a followed region that cannot be read is held before it is dropped. */
  holdMs?: number;
  leaseMs: number;
  sink: RegionFeedSink;
  logger: Logger;
  now?: () => number;
  sweepIntervalMs?: number;
  dueGraceMs?: number;
  backoff?: BackoffOptions;
}

/** What the replies' `regions` entries and the region metrics are made of. */
export interface RegionFeedStatus {
  name: string;
  home: boolean;
  /** The last snapshot was read and the log is being followed. */
  readable: boolean;
  /** Why the region's view may be missing or holding pools; undefined when it is complete. */
  reason: string | undefined;
  /** This replica's clock (ms) when the region stopped answering; undefined while it answers. */
  unreachableSinceMs: number | undefined;
  dropped: boolean;
  /** When the region's store last answered a read (ms, this replica's clock). */
  lastReadAtMs: number | undefined;
  /** The store lost its data and is being refilled by heartbeats until this time (ms). */
  refillUntilMs: number | undefined;
}

export class RegionFeed {
  readonly feed: StoreFeed;
  private readonly now: () => number;
  private readable = false;
  /** The last read failed (not merely: not read yet). */
  private failed = false;
  private reason: string | undefined = 'not read yet';
  private unreachableSinceMs: number | undefined;
  private dropped = false;
  private holdTimer: NodeJS.Timeout | undefined;
  /** The store's epoch as of the last snapshot; a change means the store lost its data. */
  private epoch: string | undefined;
  private refillTimer: NodeJS.Timeout | undefined;
  private refillUntilMs: number | undefined;
  /** The refill's lease is over: the next snapshot decides, then the region is complete again. */
  private refillEnding = false;

  constructor(private readonly options: RegionFeedOptions) {
    this.now = options.now ?? Date.now;
    const { region, sink, home } = options;
    this.feed = new StoreFeed({
      store: options.store,
      sweep: home ? () => home.sweep() : undefined,
      logger: options.logger,
      sweepIntervalMs: options.sweepIntervalMs,
      dueGraceMs: options.dueGraceMs,
      backoff: options.backoff,
      now: this.now,
      sink: {
        snapshot: (snapshot) => this.applySnapshot(snapshot),
        event: (event) => sink.event(region, event),
        due: (lapses) => sink.due(region, lapses),
        status: (readable, reason) => this.setReadable(readable, reason),
      },
    });
  }

  get name(): string {
    return this.options.region;
  }

  get isHome(): boolean {
    return this.options.home !== undefined;
  }

  get status(): RegionFeedStatus {
    return {
      name: this.options.region,
      home: this.isHome,
      readable: this.readable,
      reason: this.reason ?? (this.refillUntilMs !== undefined ? this.refillReason() : undefined),
      unreachableSinceMs: this.unreachableSinceMs,
      dropped: this.dropped,
      lastReadAtMs: this.feed.lastReadAtMs,
      refillUntilMs: this.refillUntilMs,
    };
  }

  /** Read in full, not refilling, not held: none of the region's pools may be missing. */
  get complete(): boolean {
    return this.readable && this.refillUntilMs === undefined;
  }

  /** The store failed its last read (not merely: not read yet). */
  get failing(): boolean {
    return this.failed;
  }

  start(): void {
    this.feed.start();
  }

  async stop(): Promise<void> {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    if (this.refillTimer) clearTimeout(this.refillTimer);
    await this.feed.stop();
  }

  private async applySnapshot(snapshot: StoreSnapshot): Promise<void> {
    const lost = this.epoch !== undefined && snapshot.epoch !== this.epoch;
    this.epoch = snapshot.epoch;
    if (lost) this.beginRefill();
    await this.options.sink.snapshot(this.options.region, snapshot, this.refillTimer !== undefined);
    if (this.refillEnding && !this.refillTimer) {
      this.refillEnding = false;
      this.refillUntilMs = undefined;
      this.options.sink.status(this.options.region);
    }
  }

  private setReadable(readable: boolean, reason: string | undefined): void {
    const { region, sink, logger } = this.options;
    const before = this.statusKey();
    this.readable = readable;
    this.failed = !readable;
    if (readable) {
      this.reason = undefined;
      if (this.holdTimer) clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      if (this.unreachableSinceMs !== undefined) {
        logger.info(
          { region, unreachable_since: new Date(this.unreachableSinceMs).toISOString(), dropped: this.dropped },
          'region read again',
        );
      }
      this.unreachableSinceMs = undefined;
      this.dropped = false;
    } else {
      this.reason = reason ?? 'cannot be read';
      if (this.unreachableSinceMs === undefined) this.beginHold();
    }
    if (this.statusKey() !== before) sink.status(region);
  }

  /** The region stopped answering: hold its pools, then drop them (never the home region's). */
  private beginHold(): void {
    const { region, holdMs, logger } = this.options;
    this.unreachableSinceMs = this.now();
    if (this.isHome || holdMs === undefined) return;
    logger.warn(
      { region, unreachable_since: new Date(this.unreachableSinceMs).toISOString(), hold_ms: holdMs, reason: this.reason },
      'region cannot be read; holding its pools',
    );
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      logger.warn(
        { region, unreachable_since: new Date(this.unreachableSinceMs ?? this.now()).toISOString(), hold_ms: holdMs },
        'region unreadable for longer than the hold; dropping its pools until it is read again',
      );
      // The entry says dropped once its pools are gone (a region read again meanwhile is not dropped).
      void Promise.resolve(this.options.sink.drop(region)).then((dropped) => {
        if (!dropped || this.readable) return;
        this.dropped = true;
        this.options.sink.status(region);
      });
    }, holdMs);
    this.holdTimer.unref();
  }

  /**
   * The store came back without its data (a Redis restarted without persistence, a failover that lost
   * writes): like a restarted memory store, it is incomplete for one lease while PoolRelays re-register,
   * and pools missing from it are held, not dropped. Then a fresh snapshot decides.
   */
  private beginRefill(): void {
    const { region, leaseMs, logger } = this.options;
    if (this.refillTimer) clearTimeout(this.refillTimer);
    this.refillUntilMs = this.now() + leaseMs;
    const until = new Date(this.refillUntilMs).toISOString();
    logger.warn(
      { ...(region ? { region } : {}), until },
      'the store lost its data (its epoch changed); holding every pool for one lease while PoolRelays re-register',
    );
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.refillEnding = true;
      this.feed.resnapshot();
    }, leaseMs);
    this.refillTimer.unref();
    this.options.sink.status(region);
  }

  private refillReason(): string {
    return `store lost its data: leases still being renewed may be missing until ${new Date(this.refillUntilMs!).toISOString()}`;
  }

  private statusKey(): string {
    return `${this.readable}|${this.reason}|${this.unreachableSinceMs}|${this.dropped}`;
  }
}
