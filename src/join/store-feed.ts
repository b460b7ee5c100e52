// Follows the store: a full snapshot, then the change log from the snapshot's position, into the pool
// actors. Re-reads a snapshot when the log no longer reaches back (PositionLostError) and, after any
// other failure, once a backoff has passed; meanwhile the view stays as it was, marked incomplete
// (self-preservation: an outage of the store is not an outage of the pools, so nothing lapses locally).
// Also runs the sweep that lapses due leases on the store's clock.
import type { Logger } from 'pino';
import type { LeaseEvent, RegistrationStore, StoreSnapshot } from '../store/types.js';
import { PositionLostError } from '../store/types.js';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.js';

export interface StoreFeedSink {
  /** A full read: every live lease. Keys not in it have no live lease. */
  snapshot(snapshot: StoreSnapshot): void;
  event(event: LeaseEvent): void;
  /** readable: the last snapshot was read and the log is being followed. */
  status(readable: boolean, reason?: string): void;
}

export interface StoreFeedOptions {
  store: RegistrationStore;
  sink: StoreFeedSink;
  logger: Logger;
  /** How often this replica sweeps due leases (the contract asks for at least once a second). */
  sweepIntervalMs?: number;
  backoff?: BackoffOptions;
}

export class StoreFeed {
  private readonly abort = new AbortController();
  private readonly backoff: Backoff;
  private loop: Promise<void> | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping = false;
  private round: AbortController | undefined;
  /** The last sweep error, cleared by a successful sweep (for /healthz). */
  lastSweepError: string | undefined;

  constructor(private readonly options: StoreFeedOptions) {
    this.backoff = new Backoff(options.backoff);
  }

  start(): void {
    this.loop = this.follow();
    const every = this.options.sweepIntervalMs ?? 250;
    this.sweeper = setInterval(() => void this.sweepOnce(), every);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.sweeper) clearInterval(this.sweeper);
    await this.loop;
  }

  private async sweepOnce(): Promise<void> {
    if (this.sweeping || this.abort.signal.aborted) return;
    this.sweeping = true;
    try {
      await this.options.store.sweep();
      this.lastSweepError = undefined;
    } catch (error) {
      const reason = errorMessage(error);
      if (this.lastSweepError === undefined) this.options.logger.warn({ err: reason }, 'sweep of due leases failed');
      this.lastSweepError = reason;
    } finally {
      this.sweeping = false;
    }
  }

  /** Re-read a full snapshot now (the current watch ends; the log is followed again from the new one). */
  resnapshot(): void {
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
        const started = performance.now();
        const snapshot = await store.snapshot();
        if (signal.aborted) return;
        const read = performance.now();
        sink.snapshot(snapshot);
        sink.status(true);
        logger.info(
          { leases: snapshot.records.length, read_ms: Math.round(read - started), apply_ms: Math.round(performance.now() - read) },
          'store snapshot applied',
        );
        this.backoff.reset();
        for await (const event of store.watch(snapshot.position, round.signal)) sink.event(event);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof PositionLostError) {
          logger.info({ position: error.position }, 'fell behind the change log; re-reading a snapshot');
          continue;
        }
        const reason = `store cannot be read: ${errorMessage(error)}`;
        sink.status(false, reason);
        const delay = this.backoff.next();
        logger.warn({ err: errorMessage(error), retry_in_ms: delay }, 'store cannot be read; keeping the last view');
        await sleep(delay, signal);
      } finally {
        signal.removeEventListener('abort', endRound);
      }
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
