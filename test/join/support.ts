// Helpers for the join tests: a SliceSource the test drives by hand (the store with injected failures
// is test/support/delegating-store.ts).
import type { PoolKey } from '../../src/contract/index.js';
import type { PoolEndpoints, SliceSource, SliceSourceListener } from '../../src/kube/types.js';

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

/** The EndpointSlice loop failed unexpectedly (`reason`) or is synced again (`undefined`). */
export function sliceLoopDown(source: HandDrivenSliceSource, reason: string | undefined): void {
  (source as unknown as { listener: SliceSourceListener }).listener.loopDown(reason);
}
