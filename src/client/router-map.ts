// The caller's view of the routers under the caller merge rule (docs/contract.md §5, §10): a list with
// `complete: false` may miss routers, so routers it does not name are kept; only a complete list (or a
// `delete`, or, with regions, a list in which every region of a registered router's `lease_regions` is
// `dropped`) removes one. The same rule as PoolMap's, for routers keyed by id.
import type { ListedRouter, RegionStatus, RouterList } from '../contract/index.js';
import { samePool } from './pool-map.js';

export type RouterChange =
  | { type: 'added'; id: string; router: ListedRouter }
  | { type: 'updated'; id: string; router: ListedRouter; previous: ListedRouter }
  | { type: 'removed'; id: string; previous: ListedRouter };

export class RouterMap {
  private readonly routers = new Map<string, ListedRouter>();

  get view(): ReadonlyMap<string, ListedRouter> {
    return this.routers;
  }

  /** A whole list: a `resync` event or a GET /routers reply. */
  applyList(list: Pick<RouterList, 'complete' | 'routers' | 'regions'>): RouterChange[] {
    const changes: RouterChange[] = [];
    const listed = new Set<string>();
    for (const router of list.routers) {
      listed.add(router.id);
      changes.push(...this.upsert(router));
    }
    for (const [id, router] of [...this.routers]) {
      if (listed.has(id)) continue;
      if (list.complete || routerDroppedEverywhere(router, list.regions)) changes.push(...this.remove(id));
    }
    return changes;
  }

  upsert(router: ListedRouter): RouterChange[] {
    const previous = this.routers.get(router.id);
    // Field by field, whatever order the keys came in (the pools' comparison).
    if (previous !== undefined && samePool(previous as never, router as never)) return [];
    this.routers.set(router.id, router);
    return [previous === undefined ? { type: 'added', id: router.id, router } : { type: 'updated', id: router.id, router, previous }];
  }

  remove(id: string): RouterChange[] {
    const previous = this.routers.get(id);
    if (previous === undefined) return [];
    this.routers.delete(id);
    return [{ type: 'removed', id, previous }];
  }
}

function routerDroppedEverywhere(router: ListedRouter, regions: readonly RegionStatus[] | undefined): boolean {
  const leaseRegions = router.lease_regions ?? [];
  if (regions === undefined || leaseRegions.length === 0) return false;
  const dropped = new Set(regions.filter((region) => region.dropped).map((region) => region.name));
  return leaseRegions.every((name) => dropped.has(name));
}
