// A RegistrationStore that delegates to a real one, with the failures a test injects: reads that fail the
// way a real store's do, watches that break as a dropped connection does, a whole store cut off.
import type { Registration } from '../../src/contract/index.js';
import {
  PositionLostError,
  StoreUnavailableError,
  type DueLapse,
  type HeartbeatResult,
  type LeaseEvent,
  type RegistrationStore,
  type SnapshotParts,
  type StoreSnapshot,
  type SweepResult,
} from '../../src/store/types.js';

/** A store (of pools, or of any registration R) that delegates to `inner`, with hooks to fail reads the way a real store can. */
export class DelegatingStore<R = Registration> implements RegistrationStore<R> {
  readonly kind;
  forgetsOnRestart: boolean;
  snapshotCalls = 0;
  /** performance.now() of every snapshot() call. */
  snapshotTimes: number[] = [];
  /** Errors to throw from the next snapshot() calls, in order. */
  failSnapshots: Error[] = [];
  /** Errors to throw from the next watch() calls, before they yield anything. */
  failWatches: Error[] = [];
  /**
   * The next snapshot() calls, in order: each is given the inner store's snapshot and the caller's
   * `onRead`, and plays the read (hands leases over, fails, settles) as the test chooses.
   */
  readScripts: Array<(full: StoreSnapshot<R>, onRead: SnapshotParts<R> | undefined) => Promise<StoreSnapshot<R>>> = [];
  /**
   * The epoch snapshots carry instead of the inner store's (a Redis that lost its data reads another). A
   * watch from a snapshot of any other epoch then loses its position at once, as Redis's log does; one
   * from this epoch follows the inner store's log.
   */
  epoch: string | undefined;

  constructor(
    /** The store delegated to; a test may replace it, as a region's Redis that lost its data. */
    public inner: RegistrationStore<R>,
    options: { forgetsOnRestart?: boolean } = {},
  ) {
    this.kind = inner.kind;
    this.forgetsOnRestart = options.forgetsOnRestart ?? inner.forgetsOnRestart;
  }

  heartbeat(registration: R, canonical?: string, knownVersion?: number): Promise<HeartbeatResult> {
    return this.inner.heartbeat(registration, canonical, knownVersion);
  }

  async snapshot(onRead?: SnapshotParts<R>): Promise<StoreSnapshot<R>> {
    this.snapshotCalls += 1;
    this.snapshotTimes.push(performance.now());
    const failure = this.failSnapshots.shift();
    if (failure) throw failure;
    const script = this.readScripts.shift();
    const snapshot = script ? await script(await this.inner.snapshot(), onRead) : await this.inner.snapshot(onRead);
    return this.epoch === undefined ? snapshot : { ...snapshot, epoch: this.epoch };
  }

  watch(position: string, signal: AbortSignal, epoch?: string, reached?: () => Promise<void>): AsyncIterable<LeaseEvent<R>> {
    const failure = this.failWatches.shift();
    if (failure) return this.failing(failure);
    if (this.epoch !== undefined) {
      if (epoch !== undefined && epoch !== this.epoch) return this.failing(new PositionLostError(position));
      // The inner store's own epoch is not the one its readers were told: not checked there.
      epoch = undefined;
    }
    return this.breakable(this.inner.watch(position, signal, epoch, reached));
  }

  /** A watch that throws `error` before it yields anything. */
  private failing(error: Error): AsyncIterable<LeaseEvent<R>> {
    return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
  }

  /** Makes every running watch throw `error`, as a dropped connection does. */
  breakWatches(error: Error): void {
    for (const fail of [...this.breakers]) fail(error);
  }

  private readonly breakers = new Set<(error: Error) => void>();

  private async *breakable(events: AsyncIterable<LeaseEvent<R>>): AsyncGenerator<LeaseEvent<R>> {
    const iterator = events[Symbol.asyncIterator]();
    let fail!: (error: Error) => void;
    const broken = new Promise<never>((_, reject) => {
      fail = reject;
    });
    this.breakers.add(fail);
    try {
      for (;;) {
        const next = await Promise.race([iterator.next(), broken]);
        if (next.done) return;
        yield next.value;
      }
    } finally {
      this.breakers.delete(fail);
      // Not awaited: the inner follower ends at its next wake-up (append or abort).
      void iterator.return?.();
    }
  }

  sweep(): Promise<SweepResult> {
    return this.inner.sweep();
  }

  /** Errors to throw from the next dueLapses() calls, in order. */
  failDue: Error[] = [];

  async dueLapses(graceMs?: number): Promise<DueLapse[]> {
    const failure = this.failDue.shift();
    if (failure) throw failure;
    return this.inner.dueLapses(graceMs);
  }

  /**
   * Cut the store off (`true`: every read fails with `error` and running watches break, as when a region's
   * Redis cannot be reached) or restore it (`false`).
   */
  setCut(cut: boolean, error: Error = new StoreUnavailableError('redis store: connection refused')): void {
    const failures = cut ? Array.from({ length: 100_000 }, () => error) : [];
    this.failSnapshots = [...failures];
    this.failWatches = [...failures];
    this.failDue = [...failures];
    if (cut) this.breakWatches(error);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
