// Helpers for the join tests: a SliceSource the test drives by hand, a PoolDirectory on the test's clocks
// (the store with injected failures is test/support/delegating-store.ts).
import { SimulatedClock } from 'xstate';
import type { PoolKey } from '../../src/contract/index.js';
import { PoolDirectory, type PoolDirectoryOptions } from '../../src/join/pool-directory.js';
import type { PoolEndpoints, SliceSource, SliceSourceListener } from '../../src/kube/types.js';
import type { PoolMode } from '../../machines/pool.machine.js';
import { LEASE_MS } from '../machines/pool-events.js';
import { silentLogger } from '../support/logs.js';

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

/**
 * A PoolDirectory with the join's options (suffix `-frontend`, port `http`, the machines' lease) on the
 * test's clocks: `wall` stamps events, XState's SimulatedClock runs the delayed events; `advance` moves both.
 */
export function directoryOnTestClocks(mode: PoolMode, options: Partial<PoolDirectoryOptions> = {}, wallStartMs = 1_700_000_000_000) {
  const wall = { now: wallStartMs };
  const clock = new SimulatedClock();
  const directory = new PoolDirectory({
    mode,
    leaseMs: LEASE_MS,
    logger: silentLogger(),
    frontendServiceSuffix: '-frontend',
    frontendPortName: 'http',
    now: () => wall.now,
    clock,
    onSnapshot: () => {},
    ...options,
  });
  const advance = (ms: number) => {
    wall.now += ms;
    clock.increment(ms);
  };
  return { directory, wall, clock, advance };
}
