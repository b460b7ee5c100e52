// The listed view routers read: only `live` and `frontendless` pools, a revision that grows with every
// change, completeness (with regions: each region's entry), and the change stream published to
// watchers (docs/contract.md §5, §7).
//
// The list body is serialized once per revision (and model filter) and reused: GET /pools is hot and
// JSON.stringify of a large list dominates its cost (docs/design.md "Dependencies").
import type { ListedPool, PoolKey, PoolList, RegionStatus, WatchEvent } from '../contract/index.js';

export interface Completeness {
  complete: boolean;
  /** Why the view may be missing pools, one line per source that is not synced. */
  reasons: string[];
  /** With regions configured: one entry per region, sorted by name. */
  regions?: RegionStatus[];
}

export type ViewListener = (event: WatchEvent) => void;

export interface ListedViewOptions {
  /** Prefix of revisions, so they grow across restarts of this replica (default: start time in ms). */
  epoch?: number;
}

export class ListedView {
  private readonly pools = new Map<PoolKey, { pool: ListedPool; json: string }>();
  private readonly listeners = new Set<ViewListener>();
  private readonly epoch: number;
  private seq = 0;
  private completeness: Completeness = { complete: false, reasons: ['starting'] };
  private batchDepth = 0;
  private batchDirty = false;
  private bodyCache = new Map<string, Uint8Array<ArrayBuffer>>();

  constructor(options: ListedViewOptions = {}) {
    this.epoch = options.epoch ?? Date.now();
  }

  get revision(): string {
    return `${this.epoch}-${this.seq}`;
  }

  get complete(): boolean {
    return this.completeness.complete;
  }

  get reasons(): readonly string[] {
    return this.completeness.reasons;
  }

  get size(): number {
    return this.pools.size;
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** Set or clear one pool. Publishes `upsert`/`delete` unless inside a batch (a relist). */
  update(key: PoolKey, pool: ListedPool | null): void {
    const current = this.pools.get(key);
    if (pool === null) {
      if (!current) return;
      this.pools.delete(key);
      this.changed({
        kind: 'delete',
        data: {
          revision: '',
          pool: { cluster_id: current.pool.cluster_id, namespace: current.pool.namespace, name: current.pool.name },
        },
      });
      return;
    }
    const json = JSON.stringify(pool);
    if (current?.json === json) return;
    this.pools.set(key, { pool, json });
    this.changed({ kind: 'upsert', data: { revision: '', pool } });
  }

  /**
   * Apply a relist: changes inside `fn` are not published one by one; one `resync` follows at the end
   * (a pool dropped by a relist leaves through it, without a `delete`).
   */
  batch(fn: () => void): void {
    this.batchDepth += 1;
    try {
      fn();
    } finally {
      this.batchDepth -= 1;
      if (this.batchDepth === 0) {
        if (this.batchDirty) this.bump();
        this.batchDirty = false;
        this.publish({ kind: 'resync', data: this.list() });
      }
    }
  }

  get regions(): readonly RegionStatus[] | undefined {
    return this.completeness.regions;
  }

  /**
   * New completeness. A change of `complete`, or of a region's `complete` or `dropped`, publishes a
   * `resync`; a change of reasons alone (or of a region's reason) only shows in the next reply.
   */
  setCompleteness(next: Completeness): void {
    const before = this.completeness;
    const same =
      next.complete === before.complete &&
      next.reasons.length === before.reasons.length &&
      next.reasons.every((r, i) => r === before.reasons[i]) &&
      JSON.stringify(next.regions) === JSON.stringify(before.regions);
    if (same) return;
    this.completeness = { complete: next.complete, reasons: [...next.reasons], ...(next.regions ? { regions: next.regions } : {}) };
    this.bodyCache.clear();
    if (next.complete !== before.complete || regionsShape(next.regions) !== regionsShape(before.regions)) {
      this.bump();
      this.publish({ kind: 'resync', data: this.list() });
    }
  }

  list(model?: string): PoolList {
    const keys = [...this.pools.keys()].sort();
    const pools: ListedPool[] = [];
    for (const key of keys) {
      const { pool } = this.pools.get(key)!;
      if (model === undefined || pool.model === model) pools.push(pool);
    }
    const { complete, regions } = this.completeness;
    return { complete, revision: this.revision, pools, ...(regions ? { regions } : {}) };
  }

  /** The GET /pools body, serialized and encoded once per revision and filter (a 10k-pool list is MBs). */
  body(model?: string): Uint8Array<ArrayBuffer> {
    const cacheKey = model === undefined ? '' : `m:${model}`;
    let body = this.bodyCache.get(cacheKey);
    if (body === undefined) {
      body = new TextEncoder().encode(JSON.stringify(this.list(model)));
      if (this.bodyCache.size > 64) this.bodyCache.clear();
      this.bodyCache.set(cacheKey, body);
    }
    return body;
  }

  subscribe(listener: ViewListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private changed(event: WatchEvent): void {
    if (this.batchDepth > 0) {
      this.batchDirty = true;
      this.bodyCache.clear();
      return;
    }
    this.bump();
    if (event.kind !== 'resync') event.data.revision = this.revision;
    this.publish(event);
  }

  private bump(): void {
    this.seq += 1;
    this.bodyCache.clear();
  }

  private publish(event: WatchEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** What of the regions' entries a watcher must hear of at once: which are complete, which dropped. */
function regionsShape(regions: readonly RegionStatus[] | undefined): string {
  return regions?.map((r) => `${r.name}:${r.complete}:${r.dropped}`).join(',') ?? '';
}
