// A SliceSource the test feeds by hand: the join's side of the Kubernetes interface, for pages that
// need MCS states (unregistered, one-sided) without a Kubernetes API.
import type { PoolKey } from '../../../src/contract/index.js';
import type { PoolEndpoints, SliceSource, SliceSourceListener } from '../../../src/kube/types.js';

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

  private required(): SliceSourceListener {
    if (!this.listener) throw new Error('the join has not started the slice source');
    return this.listener;
  }
}
