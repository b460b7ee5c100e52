// What the Kubernetes side tells the join: per pool key, the Ready PoolRelay addresses and frontend URLs
// that Multi-Cluster Services imports (docs/contract.md §2, §4).
import type { PoolKey } from '../contract/index.js';

export interface PoolEndpoints {
  /** Ready PoolRelay endpoint addresses (e.g. `http://10.0.0.9:9000` or bare addresses), sorted, deduplicated. */
  relays: string[];
  /** Frontend URLs `http://ip:port` (IPv6 bracketed), one per pod, sorted. */
  frontends: string[];
  /** false when MCS imports no `<name><frontend suffix>` slice carrying the named port. */
  frontendSlicesWithPort: boolean;
}

/** A router from the Global Router Service's slices (docs/contract.md §10): the pod's name (else its address) and URL. */
export interface SliceRouter {
  id: string;
  url: string;
}

export interface SliceSourceListener {
  /** After a (re)list: the whole view. A key missing here that was known before is gone (no per-key update). */
  resync(pools: ReadonlyMap<PoolKey, PoolEndpoints>): void;
  /** One pool's endpoints changed after a watch event; null when no slice names the pool any more. */
  update(key: PoolKey, endpoints: PoolEndpoints | null): void;
  /**
   * The Global Router Service's routers, whole, after a (re)list and after each event that changed them
   * (only with a router Service to read).
   */
  routers?(routers: readonly SliceRouter[]): void;
  /** synced: the last list succeeded and the watch runs. false with a reason while listing/re-watching. */
  status(synced: boolean, reason?: string): void;
  /**
   * The loop failed on an unexpected error (`reason` says why, and when it restarts); each call with a
   * reason is one such failure, counted as a restart. undefined once the restarted loop is synced again.
   */
  loopDown(reason: string | undefined): void;
}

export interface SliceSource {
  start(listener: SliceSourceListener): void;
  stop(): Promise<void>;
}
