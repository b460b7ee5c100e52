// One region's store as the join sees it (docs/design.md "Scale and regions"): a StoreFeed that follows
// it, the store's data lifetime (its epoch: a store that lost its data is refilled for one lease before
// pools it lacks lapse), and, for a region this replica only follows, the hold: a region that cannot be
// read keeps its pools for `holdMs`, then they are dropped until it is read again (docs/contract.md §7).
// Without regions the one store is a region named '' that is never dropped. It also keeps what the store's
// renewal window says (the last outage its writers recorded, whether its window is open: docs/contract.md
// §9) and says each outage once, and it logs the store's readability at a quiet cadence: one warning when
// it becomes unreadable, one line when it is read again (with how long it was not), and at most one
// reminder a minute in between (docs/operations.md "Logs").
// The feed's lines (and its StoreFeed's) carry `region` once, bound to the logger, and not at all
// without regions.
import type { Logger } from 'pino';
import type { DueLapse, LeaseEvent, LeaseReader, RegistrationStore, RenewalWindowStatus, StoreOutage, StoreSnapshot } from '../store/types.js';
import { UNWRITTEN_EPOCH } from '../store/types.js';
import type { BackoffOptions } from '../util/backoff.js';
import { StoreFeed, type SnapshotReading } from './store-feed.js';
import type { Registration } from '../contract/index.js';

export interface RegionFeedSink<R = Registration> {
  /** A snapshot of the region about to be read: where its leases go as read (StoreFeedSink.reading). */
  reading?(region: string, receipt: number): SnapshotReading<R>;
  /** A full read of the region. `holdMissing`: the store is being refilled, so pools it lacks are kept. */
  snapshot(region: string, snapshot: StoreSnapshot<R>, holdMissing: boolean, receipt: number): void | Promise<void>;
  /** The region's log was resumed where it was left (StoreFeedSink.resumed). */
  resumed?(region: string, receipt: number, due: readonly DueLapse[]): void | Promise<void>;
  /** `receipt`, and a due read's `sentAfter`: the feed's receipt order (StoreFeedSink). */
  event(region: string, event: LeaseEvent<R>, receipt: number): void;
  due(region: string, lapses: DueLapse[], sentAfter: number): void;
  /** The region's status changed (readable, refilling, held, dropped). */
  status(region: string): void;
  /** An outage of the region's store that this replica learned of (for metrics). */
  outage?(region: string, outage: StoreOutage): void;
  /**
   * The hold ran out: every lease of the region counts as gone on this replica. Resolves true once every
   * pool has been dropped, false when the drop ended early (a snapshot of the region came meanwhile).
   */
  drop(region: string): boolean | Promise<boolean>;
}

export interface RegionFeedOptions<R = Registration> {
  /** The region's name; '' without regions. */
  region: string;
  store: LeaseReader<R>;
  /** The home region's store: this replica sweeps it and the region is never dropped. */
  home?: RegistrationStore<R>;
  /** How long a followed region that cannot be read is held before it is dropped. */
  holdMs?: number;
  leaseMs: number;
  sink: RegionFeedSink<R>;
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
  /** When the last outage of the store that its writers recorded ended (ms, the store's clock). */
  lastOutageEndedMs: number | undefined;
  /** That outage's renewal window has not run yet: leases that ran out in it are not lapsed yet. */
  renewalWindowOpen: boolean;
}

/** At most one reminder a minute that a store is still unreadable (docs/operations.md "Logs"). */
export const UNREADABLE_REMINDER_MS = 60_000;

export class RegionFeed<R = Registration> {
  readonly feed: StoreFeed<R>;
  private readonly now: () => number;
  /** The options' logger, with `region` bound when there is one. */
  private readonly logger: Logger;
  private readable = false;
  /** The last read failed (not merely: not read yet). */
  private failed = false;
  private reason: string | undefined = 'not read yet';
  private unreachableSinceMs: number | undefined;
  private dropped = false;
  private holdTimer: NodeJS.Timeout | undefined;
  /** The store's log went back under the follow (a restore): the next snapshot is a loss of data. */
  private replaced = false;
  /** The store's epoch as of the last snapshot; a change means the store lost its data. */
  private epoch: string | undefined;
  private refillTimer: NodeJS.Timeout | undefined;
  private refillUntilMs: number | undefined;
  /** The refill's lease is over: the next snapshot decides, then the region is complete again. */
  private refillEnding = false;
  /** The last outage the store's writers recorded, as last read. */
  private lastOutage: StoreOutage | undefined;
  /** When (performance.now()) the last outage's window runs out, as of the read that found it open. */
  private windowEndsAt = -Infinity;
  private windowTimer: NodeJS.Timeout | undefined;
  /** Whether the renewal window was read at all yet. */
  private windowRead = false;
  /** When the last warning or reminder that the store is unreadable was logged (this replica's clock). */
  private warnedAtMs = -Infinity;

  constructor(private readonly options: RegionFeedOptions<R>) {
    this.now = options.now ?? Date.now;
    const { region, sink, home } = options;
    this.logger = region ? options.logger.child({ region }) : options.logger;
    this.feed = new StoreFeed<R>({
      store: options.store,
      sweep: home ? () => home.sweep() : undefined,
      logger: this.logger,
      sweepIntervalMs: options.sweepIntervalMs,
      dueGraceMs: options.dueGraceMs,
      backoff: options.backoff,
      now: this.now,
      sink: {
        ...(sink.reading ? { reading: (receipt: number) => sink.reading!(region, receipt) } : {}),
        snapshot: (snapshot, receipt) => this.applySnapshot(snapshot, receipt),
        ...(sink.resumed ? { resumed: (receipt: number, due: readonly DueLapse[]) => sink.resumed!(region, receipt, due) } : {}),
        event: (event, receipt) => sink.event(region, event, receipt),
        due: (lapses, sentAfter) => sink.due(region, lapses, sentAfter),
        status: (readable, reason) => this.setReadable(readable, reason),
        replaced: () => {
          this.replaced = true;
        },
        window: (status) => this.applyWindow(status),
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
      lastOutageEndedMs: this.lastOutage?.endMs,
      renewalWindowOpen: this.windowOpen,
    };
  }

  private get windowOpen(): boolean {
    return performance.now() < this.windowEndsAt;
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
    clearTimeout(this.holdTimer);
    clearTimeout(this.refillTimer);
    clearTimeout(this.windowTimer);
    await this.feed.stop();
  }

  /**
   * The store's renewal window as just read: an outage not seen before is logged once (`store outage ended`)
   * and counted; the window's end, in this replica's time, is when the entry stops saying it is open. At the
   * first read, only an outage whose window is still open counts: older ones are history.
   */
  private applyWindow(status: RenewalWindowStatus): void {
    const { region, sink } = this.options;
    const logger = this.logger;
    const outage = status.lastOutage;
    const wasOpen = this.windowOpen;
    const endedBefore = this.lastOutage?.endMs;
    const remainingMs = outage ? outage.endMs + outage.windowMs - status.nowMs : 0;
    // An outage is known by its start: a writer that got through later may still move its end.
    const isNew = outage !== undefined && outage.startMs !== this.lastOutage?.startMs && (this.windowRead || remainingMs > 0);
    this.windowRead = true;
    this.lastOutage = outage;
    this.windowEndsAt = remainingMs > 0 ? performance.now() + remainingMs : -Infinity;
    if (outage && isNew) {
      logger.warn(
        {
          outage_ms: outage.endMs - outage.startMs,
          started_at: new Date(outage.startMs).toISOString(),
          ended_at: new Date(outage.endMs).toISOString(),
          window_ms: outage.windowMs,
          window_until: new Date(outage.endMs + outage.windowMs).toISOString(),
          leases_in_window: outage.covered,
        },
        'store outage ended',
      );
      sink.outage?.(region, outage);
    }
    if (this.windowTimer) clearTimeout(this.windowTimer);
    this.windowTimer = undefined;
    if (remainingMs > 0) {
      // The entry stops saying "open" when the window has run, without waiting for the next read.
      this.windowTimer = setTimeout(() => {
        this.windowTimer = undefined;
        sink.status(region);
      }, remainingMs + 1);
      this.windowTimer.unref();
    }
    if (isNew || wasOpen !== this.windowOpen || outage?.endMs !== endedBefore) sink.status(region);
  }

  private async applySnapshot(snapshot: StoreSnapshot<R>, receipt: number): Promise<void> {
    // An epoch that was not written yet (UNWRITTEN_EPOCH) names no data lifetime: one written later is the
    // first, not a loss (the region's replicas write it before any of their leases can be read). A written
    // epoch that goes missing, or changes, is a loss: the refill it starts covers the one written next.
    const known = this.epoch !== undefined && this.epoch !== UNWRITTEN_EPOCH;
    const epochChanged = known && snapshot.epoch !== this.epoch;
    const replaced = this.replaced && this.epoch !== undefined;
    this.replaced = false;
    this.epoch = snapshot.epoch;
    if (epochChanged || replaced) this.beginRefill(epochChanged ? 'its epoch changed' : 'its change log went back');
    await this.options.sink.snapshot(this.options.region, snapshot, this.refillTimer !== undefined, receipt);
    if (this.refillEnding && !this.refillTimer) {
      this.refillEnding = false;
      this.refillUntilMs = undefined;
      this.options.sink.status(this.options.region);
    }
  }

  private setReadable(readable: boolean, reason: string | undefined): void {
    const { region, sink } = this.options;
    const logger = this.logger;
    const before = this.statusKey();
    this.readable = readable;
    this.failed = !readable;
    if (readable) {
      this.reason = undefined;
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      if (this.unreachableSinceMs !== undefined) {
        logger.info(
          {
            unreachable_since: new Date(this.unreachableSinceMs).toISOString(),
            unreadable_ms: this.now() - this.unreachableSinceMs,
            ...(this.isHome ? {} : { dropped: this.dropped }),
          },
          this.isHome ? 'store read again' : 'region read again',
        );
      }
      this.unreachableSinceMs = undefined;
      this.warnedAtMs = -Infinity;
      this.dropped = false;
    } else {
      this.reason = reason ?? 'cannot be read';
      if (this.unreachableSinceMs === undefined) this.beginHold();
      else this.remindUnreadable();
    }
    if (this.statusKey() !== before) sink.status(region);
  }

  /** The region stopped answering: hold its pools, then drop them (never the home region's). */
  private beginHold(): void {
    const { region, holdMs } = this.options;
    const logger = this.logger;
    this.unreachableSinceMs = this.now();
    this.warnedAtMs = this.unreachableSinceMs;
    const since = new Date(this.unreachableSinceMs).toISOString();
    if (this.isHome || holdMs === undefined) {
      logger.warn({ unreachable_since: since, reason: this.reason }, 'store cannot be read; keeping the last view');
      return;
    }
    logger.warn({ unreachable_since: since, hold_ms: holdMs, reason: this.reason }, 'region cannot be read; holding its pools');
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      logger.warn(
        { unreachable_since: new Date(this.unreachableSinceMs ?? this.now()).toISOString(), hold_ms: holdMs },
        'region unreadable for longer than the hold; dropping its pools until it is read again',
      );
      // The entry says dropped once its pools are gone (a region read again meanwhile is not dropped).
      // A drop that fails leaves the region held as it is, logged: never a rejection nobody handles.
      Promise.resolve()
        .then(() => this.options.sink.drop(region))
        .then(
          (dropped) => {
            if (!dropped || this.readable) return;
            this.dropped = true;
            this.options.sink.status(region);
          },
          (error: unknown) => logger.error({ err: error }, "dropping the region's pools failed"),
        );
    }, holdMs);
    this.holdTimer.unref();
  }

  /** Still unreadable: a reminder, at most one a minute (the first warning counts as one). */
  private remindUnreadable(): void {
    const now = this.now();
    if (this.unreachableSinceMs === undefined || now - this.warnedAtMs < UNREADABLE_REMINDER_MS) return;
    this.warnedAtMs = now;
    this.logger.warn(
      {
        unreachable_since: new Date(this.unreachableSinceMs).toISOString(),
        unreadable_ms: now - this.unreachableSinceMs,
        reason: this.reason,
        ...(this.isHome ? {} : { dropped: this.dropped }),
      },
      this.isHome ? 'store still cannot be read; keeping the last view' : 'region still cannot be read',
    );
  }

  /**
   * The store came back without its data (a Redis restarted without persistence, a failover that lost
   * writes): like a restarted memory store, it is incomplete for one lease while PoolRelays re-register,
   * and pools missing from it are held, not dropped. Then a fresh snapshot decides.
   */
  private beginRefill(cause: string): void {
    const { region, leaseMs } = this.options;
    const logger = this.logger;
    clearTimeout(this.refillTimer);
    this.refillUntilMs = this.now() + leaseMs;
    const until = new Date(this.refillUntilMs).toISOString();
    logger.warn(
      { until },
      `the store lost its data (${cause}); holding every pool for one lease while PoolRelays re-register`,
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
