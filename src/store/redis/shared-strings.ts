// The strings most pools repeat (a model, a cluster, a namespace, a region), one copy each in the heap.
// JSON.parse gives every registration read its own copy of every string longer than a few characters,
// so 100,000 pools of one model held 100,000 copies of its name (5 MiB for a 33-character name). Each
// registration read from the store has these fields replaced by the copy seen first (docs/design.md
// "Memory per pool"). The table is bounded: once it holds MAX_SHARED strings it is emptied and filled
// again, so made-up values cost at most the bound, never a leak.
import type { Registration } from '../../contract/index.js';

/** Distinct strings kept; a fleet has far fewer models, clusters, namespaces and regions. */
export const MAX_SHARED = 4096;

export class SharedStrings {
  private readonly table = new Map<string, string>();

  get size(): number {
    return this.table.size;
  }

  /** The copy of `value` kept, or `value` itself, kept from now on. */
  share(value: string): string {
    const kept = this.table.get(value);
    if (kept !== undefined) return kept;
    if (this.table.size >= MAX_SHARED) this.table.clear();
    this.table.set(value, value);
    return value;
  }

  /**
   * Replaces the repeated fields of a registration just parsed (nothing else holds it yet). Fields of an
   * unexpected type are left as they are: what reads the record judges them.
   */
  shareFields(registration: Registration): Registration {
    const r = registration as Partial<Record<keyof Registration, unknown>>;
    if (typeof r.model === 'string') r.model = this.share(r.model);
    if (typeof r.cluster_id === 'string') r.cluster_id = this.share(r.cluster_id);
    if (typeof r.namespace === 'string') r.namespace = this.share(r.namespace);
    const location = r.location as Partial<Record<'region' | 'zone', unknown>> | null | undefined;
    if (typeof location?.region === 'string') location.region = this.share(location.region);
    if (typeof location?.zone === 'string') location.zone = this.share(location.zone);
    if (Array.isArray(r.capabilities)) {
      r.capabilities.forEach((value: unknown, i, list) => {
        if (typeof value === 'string') list[i] = this.share(value);
      });
    }
    if (Array.isArray(r.capacity)) {
      for (const item of r.capacity as (Partial<Record<'name', unknown>> | null)[]) {
        if (typeof item?.name === 'string') item.name = this.share(item.name);
      }
    }
    return registration;
  }
}

/** One table per process: every store read shares it. */
export const sharedStrings = new SharedStrings();
