// A SliceSource the test feeds by hand: the join's side of the Kubernetes interface, for pages that
// need MCS states (unregistered, one-sided) without a Kubernetes API.
import type { PoolKey } from '../../../src/contract/index.js';
import type { PoolEndpoints, SliceRouter, SliceSource, SliceSourceListener } from '../../../src/kube/types.js';

export class FedSlices implements SliceSource {
  private listener: SliceSourceListener | undefined;

  start(listener: SliceSourceListener): void {
    this.listener = listener;
  }

  async stop(): Promise<void> {
    this.listener = undefined;
  }

  resync(pools: ReadonlyMap<PoolKey, PoolEndpoints>): void {
    this.required().resync(pools);
    this.required().status(true);
  }

  update(key: PoolKey, endpoints: PoolEndpoints | null): void {
    this.required().update(key, endpoints);
  }

  /** The Global Router Service's Ready routers, whole (docs/contract.md §10). */
  routers(routers: readonly SliceRouter[]): void {
    const listener = this.required();
    if (!listener.routers) throw new Error('the join reads no router Service');
    listener.routers(routers);
  }

  private required(): SliceSourceListener {
    if (!this.listener) throw new Error('the join has not started the slice source');
    return this.listener;
  }
}
