// The router's view of the listed pools under the caller merge rule (docs/contract.md §5): a list with
// `complete: false` may miss pools, so pools it does not name are kept; only a complete list (or a
// `delete` event) removes one. Extended with regions (docs/contract.md §7): a list also removes a pool it
// does not name when every region of the pool's `lease_regions` is, in that list, either `complete` (read
// in full: the pool is not missing from it, it has no live lease there) or `dropped`, as the watch
// stream's `delete`s do; so a poller converges while some other region is dropped. Pure: every edge case
// is tested without a server.
import { poolKey, type ListedPool, type PoolId, type PoolKey, type PoolList, type RegionStatus } from '../contract/index.js';

/** One change of the view, as `watchPools()` reports it. */
export type PoolChange =
  | { type: 'added'; key: PoolKey; pool: ListedPool }
  | { type: 'updated'; key: PoolKey; pool: ListedPool; previous: ListedPool }
  | { type: 'removed'; key: PoolKey; previous: ListedPool };

export class PoolMap {
  private readonly pools = new Map<PoolKey, ListedPool>();
  private readonly keysByModel = new Map<string, Set<PoolKey>>();

  /** Every known pool by key (`cluster_id/namespace/name`). Read-only: changes go through apply*. */
  get view(): ReadonlyMap<PoolKey, ListedPool> {
    return this.pools;
  }

  get(key: PoolKey): ListedPool | undefined {
    return this.pools.get(key);
  }

  /** The known pools serving `model`, ordered by key. */
  byModel(model: string): ListedPool[] {
    const keys = [...(this.keysByModel.get(model) ?? [])].sort();
    return keys.map((key) => this.pools.get(key)!);
  }

  /**
   * A whole list: a `resync` event or a GET /pools reply. Every listed pool is added or updated; a known
   * pool it does not name is removed when `complete` is true, or when every region in the pool's
   * `lease_regions` is `complete` or `dropped` in the list's `regions` (docs/contract.md §7); otherwise it
   * is kept.
   */
  applyList(list: PoolList): PoolChange[] {
    const changes: PoolChange[] = [];
    const listed = new Set<PoolKey>();
    for (const pool of list.pools) {
      listed.add(poolKey(pool));
      changes.push(...this.upsert(pool));
    }
    for (const [key, pool] of [...this.pools]) {
      if (listed.has(key)) continue;
      if (list.complete || settledEverywhere(pool, list.regions)) changes.push(...this.remove(key));
    }
    return changes;
  }

  /** An `upsert` event: the pool is listed with these fields. No change when they are the same. */
  upsert(pool: ListedPool): PoolChange[] {
    const key = poolKey(pool);
    const previous = this.pools.get(key);
    if (previous !== undefined && samePool(previous, pool)) return [];
    if (previous !== undefined) this.unindex(key, previous);
    this.pools.set(key, pool);
    this.index(key, pool);
    return [previous === undefined ? { type: 'added', key, pool } : { type: 'updated', key, pool, previous }];
  }

  /** A `delete` event (or a pool missing from a complete list). */
  remove(id: PoolId | PoolKey): PoolChange[] {
    const key = typeof id === 'string' ? id : poolKey(id);
    const previous = this.pools.get(key);
    if (previous === undefined) return [];
    this.pools.delete(key);
    this.unindex(key, previous);
    return [{ type: 'removed', key, previous }];
  }

  private index(key: PoolKey, pool: ListedPool): void {
    let keys = this.keysByModel.get(pool.model);
    if (keys === undefined) this.keysByModel.set(pool.model, (keys = new Set()));
    keys.add(key);
  }

  private unindex(key: PoolKey, pool: ListedPool): void {
    const keys = this.keysByModel.get(pool.model);
    keys?.delete(key);
    if (keys?.size === 0) this.keysByModel.delete(pool.model);
  }
}

/**
 * True when `pool` names at least one lease region and every one of them is `dropped: true` in `regions`
 * (docs/contract.md §7): the replica no longer follows any region that holds its lease, so it is gone from
 * that replica's view though the list is incomplete. A region `regions` does not name counts as not dropped.
 */
export function droppedEverywhere(pool: ListedPool, regions: readonly RegionStatus[] | undefined): boolean {
  const leaseRegions = pool.lease_regions ?? [];
  if (regions === undefined || leaseRegions.length === 0) return false;
  const dropped = new Set(regions.filter((region) => region.dropped).map((region) => region.name));
  return leaseRegions.every((name) => dropped.has(name));
}

/**
 * True when `pool` names at least one lease region and every one of them is `complete: true` or
 * `dropped: true` in `regions` (docs/contract.md §7): each of those regions is read in full (so a pool the
 * list leaves out has no live lease there) or no longer followed at all, so a list that leaves the pool
 * out is that replica's last word on it, though the list is incomplete because of some other region. A
 * region `regions` does not name counts as neither.
 */
export function settledEverywhere(pool: ListedPool, regions: readonly RegionStatus[] | undefined): boolean {
  const leaseRegions = pool.lease_regions ?? [];
  if (regions === undefined || leaseRegions.length === 0) return false;
  const settled = new Set(regions.filter((region) => region.complete || region.dropped).map((region) => region.name));
  return leaseRegions.every((name) => settled.has(name));
}

/** Field-by-field equality, whatever order the keys came in. */
export function samePool(a: ListedPool, b: ListedPool): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
