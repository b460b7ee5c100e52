// Helpers for the join tests: a RegistrationStore that delegates to a real one with failures the test
// injects, and a SliceSource the test drives by hand.
import type { PoolKey } from '../../src/contract/index.js';
import type { PoolEndpoints, SliceSource, SliceSourceListener } from '../../src/kube/types.js';
import type { DueLapse, HeartbeatResult, LeaseEvent, RegistrationStore, StoreSnapshot } from '../../src/store/types.js';
import type { Registration } from '../../src/contract/index.js';

/** A store that delegates to `inner`, with hooks to fail reads the way a real store can. */
export class DelegatingStore implements RegistrationStore {
  readonly kind;
  forgetsOnRestart: boolean;
  snapshotCalls = 0;
  /** performance.now() of every snapshot() call. */
  snapshotTimes: number[] = [];
  /** Errors to throw from the next snapshot() calls, in order. */
  failSnapshots: Error[] = [];
  /** Errors to throw from the next watch() calls, before they yield anything. */
  failWatches: Error[] = [];

  constructor(
    readonly inner: RegistrationStore,
    options: { forgetsOnRestart?: boolean } = {},
  ) {
    this.kind = inner.kind;
    this.forgetsOnRestart = options.forgetsOnRestart ?? inner.forgetsOnRestart;
  }

  heartbeat(registration: Registration): Promise<HeartbeatResult> {
    return this.inner.heartbeat(registration);
  }

  async snapshot(): Promise<StoreSnapshot> {
    this.snapshotCalls += 1;
    this.snapshotTimes.push(performance.now());
    const failure = this.failSnapshots.shift();
    if (failure) throw failure;
    return this.inner.snapshot();
  }

  watch(position: string, signal: AbortSignal): AsyncIterable<LeaseEvent> {
    const failure = this.failWatches.shift();
    if (failure) {
      return {
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(failure) }),
      };
    }
    return this.breakable(this.inner.watch(position, signal));
  }

  /** Makes every running watch throw `error`, as a dropped connection does. */
  breakWatches(error: Error): void {
    for (const fail of [...this.breakers]) fail(error);
  }

  private readonly breakers = new Set<(error: Error) => void>();

  private async *breakable(events: AsyncIterable<LeaseEvent>): AsyncGenerator<LeaseEvent> {
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

  sweep(): Promise<number> {
    return this.inner.sweep();
  }

  /** Errors to throw from the next dueLapses() calls, in order. */
  failDue: Error[] = [];

  async dueLapses(graceMs?: number): Promise<DueLapse[]> {
    const failure = this.failDue.shift();
    if (failure) throw failure;
    return this.inner.dueLapses(graceMs);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The Kubernetes side, driven by the test through the listener the join hands it. */
export class HandDrivenSliceSource implements SliceSource {
  private listener: SliceSourceListener | undefined;
  stopped = false;

  start(listener: SliceSourceListener): void {
    this.listener = listener;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  private get started(): SliceSourceListener {
    if (!this.listener) throw new Error('the slice source was not started');
    return this.listener;
  }

  resync(pools: Record<PoolKey, PoolEndpoints>): void {
    this.started.resync(new Map(Object.entries(pools)));
  }

  update(key: PoolKey, endpoints: PoolEndpoints | null): void {
    this.started.update(key, endpoints);
  }

  status(synced: boolean, reason?: string): void {
    this.started.status(synced, reason);
  }
}
