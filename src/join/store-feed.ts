// Follows one store: a full snapshot, then the change log from the snapshot's position, into the
// pools. After a failure it tries again once a backoff has passed (0.25 s doubling to 2 s, jittered) or
// as soon as the store answers any command again, whichever comes first, and resumes the log where it
// left it: the entries since are all that changed the view (docs/design.md "Resuming the log"). It
// re-reads a snapshot only when the log no longer reaches back (PositionLostError), the store's data was
// replaced, or the caller asks (resnapshot). Meanwhile the view stays as it was, marked incomplete
// (self-preservation: an outage of the store is not an outage of the pools, so nothing lapses locally).
// On a timer it also sweeps the store it owns (the home region's: lapses logged on the store's clock)
// or, for a store it only follows, reads the leases whose deadline passed there (docs/design.md "Scale
// and regions"), so a region with no replica left to sweep still lapses. A sweep of the home store comes
// back when the soonest deadline it left runs out, if that is sooner than the interval, so a lease is
// lapsed a round trip after its deadline rather than up to an interval later (docs/design.md "The store").
import type { Logger } from 'pino';
import type { DueLapse, LeaseEvent, LeaseReader, LeaseRecord, RenewalWindowStatus, StoreSnapshot, SweepResult } from '../store/types.js';
import { isStaleData, PositionLostError, StoreReplacedError } from '../store/types.js';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.js';
import type { Registration } from '../contract/index.js';

/**
 * Every snapshot and log event a feed delivers carries its receipt: a counter of this feed, one up per
 * delivery. A due read carries the receipt of the last delivery before it was sent: it was judged in
 * the store after everything delivered up to then was logged, and maybe before what came later. The
 * order is this replica's own, so it holds whatever the store's clock did (docs/contract.md §7).
 */
export interface StoreFeedSink<R = Registration> {
  /**
   * A snapshot is about to be read with this receipt: where its leases go as they are read, applied while
   * the rest is read (LeaseReader.snapshot's `onRead`). `snapshot` with the same receipt settles it; should
   * the read fail or the feed stop first, `abandon` is called instead. Without it, leases come only in
   * `snapshot`.
   */
  reading?(receipt: number): SnapshotReading<R>;
  /** A full read: every live lease. Keys not in it have no live lease. The feed is readable once it settles. */
  snapshot(snapshot: StoreSnapshot<R>, receipt: number): void | Promise<void>;
  /**
   * After a failure, the log was found to reach back to where the feed left it: the view as it was is
   * still good, and the log's entries since follow. Called before them, and awaited: what the sink put
   * aside meanwhile (a dropped region's leases) goes back here, without those `due` names (a followed
   * store's leases whose deadline passed, read just now; for a store this replica sweeps, none: its
   * lapses are in the log). The feed is readable once it settles.
   */
  resumed?(receipt: number, due: readonly DueLapse[]): void | Promise<void>;
  event(event: LeaseEvent<R>, receipt: number): void;
  /** readable: the last snapshot was read and the log is being followed. */
  status(readable: boolean, reason?: string): void;
  /**
   * Leases of a followed store whose deadline passed on its clock (not called for a swept store), with the
   * receipt of the last delivery before the read was sent.
   */
  due?(lapses: DueLapse[], sentAfter: number): void;
  /** The store's data was replaced under the follow (its log went back): the snapshot read next is a loss of data. */
  replaced?(): void;
  /** The store's renewal window, read at most once a second beside a sweep or a due read (docs/contract.md §9). */
  window?(status: RenewalWindowStatus): void;
}

/** A snapshot being read, as a sink takes it (StoreFeedSink.reading). */
export interface SnapshotReading<R = Registration> {
  /** Leases as the read found them: not yet a consistent state (LeaseReader.snapshot). */
  records(records: LeaseRecord<R>[]): void;
  /** The read failed or the feed stopped: no `snapshot` follows for this receipt. */
  abandon(): void;
}

export interface StoreFeedOptions<R = Registration> {
  store: LeaseReader<R>;
  /**
   * Sweep the store (the home region's: only its replicas log lapses there). Without it: read due deadlines.
   * A SweepResult's nextDueInMs times the next sweep when it is sooner than the interval.
   */
  sweep?: () => Promise<Pick<SweepResult, 'nextDueInMs'> | unknown>;
  sink: StoreFeedSink<R>;
  logger: Logger;
  /** How often this replica sweeps, or reads due deadlines (the contract asks for at least once a second). */
  sweepIntervalMs?: number;
  /** A followed store: how long past its deadline (store clock) a lease is read as lapsed; covers clock skew
   * and replication lag of a read replica, so a renewal still in flight is never taken for a lapse. */
  dueGraceMs?: number;
  backoff?: BackoffOptions;
  now?: () => number;
}

/** How long past its deadline a followed store's lease counts as lapsed (see StoreFeedOptions.dueGraceMs). */
export const DEFAULT_DUE_GRACE_MS = 1000;

/**
 * Re-reads after a failure: capped at 2 s, so a store that answers again is read within 2 s even after a
 * long outage (docs/design.md "The store"); jittered below the cap, so replicas do not all come at once.
 */
export const STORE_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 2000, jitterBelowCap: true };

/** The renewal window's status is read beside a sweep or a due read at most this often. */
export const WINDOW_READ_INTERVAL_MS = 1000;

/** The sweep interval when none is given: the longest a home store waits between two sweeps. */
export const DEFAULT_SWEEP_INTERVAL_MS = 250;
/**
 * The least time from one sweep's end to the next when a deadline times it: at most 100 sweeps a second
 * per replica while many leases run out one after another (each sweep then lapses those due by then),
 * and never a tight loop on a deadline that a renewal moved as the sweep ran.
 */
export const MIN_SWEEP_GAP_MS = 10;

/**
 * When to sweep next: at the interval, or sooner when the last sweep says a deadline runs out before
 * then: 1 ms after it (Redis TIME counts whole milliseconds), and no sooner than MIN_SWEEP_GAP_MS.
 */
export function nextSweepDelayMs(intervalMs: number, outcome: unknown): number {
  const due = (outcome as Partial<SweepResult> | undefined)?.nextDueInMs;
  // False for anything but a finite number (Number.isFinite does not convert).
  if (!Number.isFinite(due)) return intervalMs;
  return Math.min(intervalMs, Math.max(MIN_SWEEP_GAP_MS, Math.ceil(due as number) + 1));
}

export class StoreFeed<R = Registration> {
  private readonly abort = new AbortController();
  private readonly backoff: Backoff;
  private loop: Promise<void> | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private round: AbortController | undefined;
  /** The last sweep error, cleared by a successful sweep (for /healthz). */
  lastSweepError: string | undefined;
  /** When (this replica's clock, ms) the store last answered a read: a snapshot, a log read, a due read. */
  lastReadAtMs: number | undefined;
  /** The last read of the store failed (its feed has warned of it). */
  private failing = false;
  /** When the renewal window was last read (performance.now()). */
  private windowReadAt = -Infinity;
  /** The receipt of the last snapshot or event delivered (StoreFeedSink), or of the snapshot being read. */
  private receipts = 0;
  /** The receipt of the snapshot being read (its leases may be handed over meanwhile: StoreFeedSink.reading). */
  private readingReceipt: number | undefined;
  /**
   * Where the log was left: the settled snapshot's position, then each event's. Undefined until a snapshot
   * settles, and whenever one must be read again (a lost position, replaced data, resnapshot()).
   */
  private resumeFrom: { position: string; epoch: string } | undefined;

  constructor(private readonly options: StoreFeedOptions<R>) {
    this.backoff = new Backoff(options.backoff ?? STORE_BACKOFF);
  }

  start(): void {
    this.loop = this.follow();
    this.scheduleSweep(this.sweepIntervalMs());
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.sweeper);
    await this.loop;
  }

  private sweepIntervalMs(): number {
    return this.options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  }

  /** One timer at a time: each sweep, when it ends, sets the next. */
  private scheduleSweep(delayMs: number): void {
    if (this.abort.signal.aborted) return;
    // sweepOnce() catches what the store throws; anything else is logged, never left unhandled.
    this.sweeper = setTimeout(() => {
      this.sweepOnce().catch((error: unknown) => this.options.logger.error({ err: error }, 'sweep failed unexpectedly'));
    }, delayMs);
    this.sweeper.unref();
  }

  private noteRead(): void {
    this.lastReadAtMs = (this.options.now ?? Date.now)();
  }

  /** Runs only from the timer, which stop() clears and scheduleSweep() never sets after it. */
  private async sweepOnce(): Promise<void> {
    let nextMs = this.sweepIntervalMs();
    try {
      const { sweep, sink, store } = this.options;
      this.readWindow();
      if (sweep) {
        nextMs = nextSweepDelayMs(nextMs, await sweep());
      } else {
        // A due read sent while a snapshot is read is judged as sent before it: the read may find a lease
        // renewed after the due read was sent.
        const sentAfter = this.readingReceipt === undefined ? this.receipts : this.readingReceipt - 1;
        const due = await store.dueLapses(this.options.dueGraceMs ?? DEFAULT_DUE_GRACE_MS);
        this.noteRead();
        if (due.length > 0) sink.due?.(due, sentAfter);
      }
      this.lastSweepError = undefined;
    } catch (error) {
      const reason = errorMessage(error);
      // Data known to be stale (a read replica cut off from its master, its follow still answering): the
      // store counts as unreadable until a snapshot can be read again, which also brings back whatever
      // changed meanwhile without a log entry (plain renewals).
      if (isStaleData(error)) this.resnapshot();
      // Once until a sweep succeeds again; a store that cannot be read at all is warned of by its feed.
      if (this.lastSweepError === undefined) {
        const what = this.options.sweep ? 'sweep of due leases failed' : 'read of due leases failed';
        if (!this.failing) this.options.logger.warn({ err: reason }, what);
        else this.options.logger.debug({ err: reason }, what);
      }
      this.lastSweepError = reason;
    } finally {
      this.scheduleSweep(nextMs);
    }
  }

  /** The renewal window's status, beside the sweep or due read (its own failure is the sweep's to report). */
  private readWindow(): void {
    const { store, sink } = this.options;
    if (!store.renewalWindow || !sink.window || performance.now() - this.windowReadAt < WINDOW_READ_INTERVAL_MS) return;
    this.windowReadAt = performance.now();
    store.renewalWindow().then(
      (status) => {
        if (!this.abort.signal.aborted) sink.window?.(status);
      },
      () => {
        this.windowReadAt = -Infinity;
      },
    );
  }

  /** Re-read a full snapshot now (the current watch ends; the log is followed again from the new one). */
  resnapshot(): void {
    this.resumeFrom = undefined;
    this.round?.abort();
  }

  private async follow(): Promise<void> {
    const { store, sink, logger } = this.options;
    const signal = this.abort.signal;
    while (!signal.aborted) {
      // One round: a snapshot, then the log from it, until it fails or resnapshot() ends the round.
      const round = new AbortController();
      this.round = round;
      const endRound = () => round.abort();
      signal.addEventListener('abort', endRound, { once: true });
      try {
        // Where the last round left the log, or (first, or when it cannot be resumed) a snapshot's position.
        const resuming = this.resumeFrom;
        const from = resuming ?? (await this.readSnapshot(signal));
        if (from === undefined) return;
        if (!resuming) this.backoff.reset();
        const cursor = { ...from };
        this.resumeFrom = cursor;
        const reached = resuming && this.resumeReached(cursor, round.signal);
        for await (const event of store.watch(from.position, round.signal, from.epoch, reached)) {
          this.noteRead();
          // (After resnapshot() the cursor is no longer resumeFrom: the snapshot read next decides.)
          cursor.position = event.position;
          sink.event(event, ++this.receipts);
        }
        // The log ended without an error: resnapshot() or stop ended the round, or the store closed under
        // it. Read anew.
        this.resumeFrom = undefined;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof StoreReplacedError) {
          this.resumeFrom = undefined;
          sink.replaced?.();
          continue;
        }
        // Data known to be stale (a read replica cut off from its master): only a snapshot, once it is
        // current, brings what changed without a log entry.
        if (isStaleData(error)) this.resumeFrom = undefined;
        if (error instanceof PositionLostError) {
          this.resumeFrom = undefined;
          logger.info({ position: error.position }, 'fell behind the change log; re-reading a snapshot');
          continue;
        }
        const reason = `store cannot be read: ${errorMessage(error)}`;
        this.failing = true;
        sink.status(false, reason);
        const delay = this.backoff.next();
        // The region's feed warns once, then at most once a minute (region-feed.ts); each retry is debug.
        logger.debug({ err: errorMessage(error), retry_in_ms: delay }, 'store cannot be read; retrying');
        await this.backoffSleep(delay, signal);
      } finally {
        signal.removeEventListener('abort', endRound);
      }
    }
  }

  /**
   * Reads a snapshot and applies it; returns where the log is followed from (undefined once stopped). A
   * function of its own so that nothing of the snapshot outlives its apply: a local of follow() would be
   * held by its suspended frame for the whole watch, every record of the store (20 MB of live heap at
   * 100,000 pools) beside the view built from them.
   */
  private async readSnapshot(signal: AbortSignal): Promise<Pick<StoreSnapshot<R>, 'position' | 'epoch'> | undefined> {
    const { store, sink, logger } = this.options;
    const started = performance.now();
    const receipt = ++this.receipts;
    // Leases applied as they are read where the sink takes them, so a large store costs one pass, not a
    // read and then an apply (docs/design.md "Snapshots that scale with bytes").
    const reading = sink.reading?.(receipt);
    let snapshot: StoreSnapshot<R>;
    this.readingReceipt = receipt;
    try {
      snapshot = await store.snapshot(reading && ((records) => reading.records(records)));
    } catch (error) {
      reading?.abandon();
      throw error;
    } finally {
      this.readingReceipt = undefined;
    }
    if (signal.aborted) {
      reading?.abandon();
      return undefined;
    }
    const read = performance.now();
    this.noteRead();
    // Applied in batches (a large store yields the event loop meanwhile): readable only once all of it is.
    await sink.snapshot(snapshot, receipt);
    if (signal.aborted) return undefined;
    this.failing = false;
    sink.status(true);
    logger.info(
      { leases: snapshot.records.length, read_ms: Math.round(read - started), apply_ms: Math.round(performance.now() - read) },
      'store snapshot applied',
    );
    return { position: snapshot.position, epoch: snapshot.epoch };
  }

  /**
   * What runs once a resumed log is found to reach back to where it was left (LeaseReader.watch's
   * `reached`): the sink takes back what it put aside, then the feed is readable again, as after a
   * snapshot; the entries since follow. A followed store is asked which leases ran out meanwhile (a store
   * this replica sweeps logs every lapse), in a read sent now, beside the log's first read rather than
   * after it: over a WAN that is a round trip less. That read also proves a read replica current, as a
   * snapshot's does: one that is not throws a StaleDataError, and the feed reads a snapshot once it is.
   */
  private resumeReached(cursor: { position: string }, round: AbortSignal): () => Promise<void> {
    const { store, sink, logger, sweep } = this.options;
    const started = performance.now();
    const due = sweep ? Promise.resolve([]) : store.dueLapses(this.options.dueGraceMs ?? DEFAULT_DUE_GRACE_MS);
    // Settled here too: when the log's first read fails, nothing awaits it.
    due.catch(() => undefined);
    return async () => {
      this.noteRead();
      // Awaited whether or not the sink takes it: a stale read replica fails the resume either way.
      const lapses = await due;
      await sink.resumed?.(++this.receipts, lapses);
      if (round.aborted) return;
      this.backoff.reset();
      this.failing = false;
      sink.status(true);
      logger.info({ position: cursor.position, resume_ms: Math.round(performance.now() - started) }, 'change log resumed');
    };
  }

  /** The backoff, cut short when the store answers a command again (a heartbeat, a sweep). */
  private async backoffSleep(delay: number, signal: AbortSignal): Promise<void> {
    const answered = new AbortController();
    const unsubscribe = this.options.store.onAvailable?.(() => answered.abort());
    try {
      await sleep(delay, AbortSignal.any([signal, answered.signal]));
    } finally {
      unsubscribe?.();
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
