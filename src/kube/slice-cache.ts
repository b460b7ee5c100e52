// The pool slices the watch has seen, indexed by pool key. Applying a watch event or a relist says
// which pool keys changed, so only those pools are recomputed. No I/O, no clock, no logging.
import type { PoolKey } from '../contract/index.js';
import type { SliceRole } from './naming.js';
import { sliceId, type EndpointSlice, type SliceId } from './slice.js';

export interface CachedSlice {
  id: SliceId;
  key: PoolKey;
  role: SliceRole;
  slice: EndpointSlice;
}

export type SliceEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface SliceEvent {
  type: SliceEventType;
  slice: EndpointSlice;
}

/** The pool a slice belongs to, or undefined for a slice that names no pool. */
export type ClassifySlice = (slice: EndpointSlice) => { key: PoolKey; role: SliceRole } | undefined;

/**
 * The keys whose slices differ when the cache entry of one slice goes from `previous` to `next`
 * (undefined: absent). A slice that moved to another pool changes both; an unchanged resourceVersion
 * means unchanged content, so a repeated ADDED after a re-watch changes nothing.
 */
export function changedKeys(previous: CachedSlice | undefined, next: CachedSlice | undefined): PoolKey[] {
  if (!previous) return next ? [next.key] : [];
  if (!next) return [previous.key];
  if (previous.key !== next.key) return [previous.key, next.key];
  if (previous.role !== next.role) return [next.key];
  return sameVersion(previous.slice, next.slice) ? [] : [next.key];
}

function sameVersion(a: EndpointSlice, b: EndpointSlice): boolean {
  const version = a.metadata.resourceVersion;
  return version !== undefined && version !== null && version === b.metadata.resourceVersion;
}

export class SliceCache {
  private readonly slices = new Map<SliceId, CachedSlice>();
  private readonly byKey = new Map<PoolKey, Map<SliceId, CachedSlice>>();

  constructor(private readonly classify: ClassifySlice) {}

  /** Apply one watch event; returns the keys whose slices changed. */
  apply(event: SliceEvent): PoolKey[] {
    const id = sliceId(event.slice);
    const next = event.type === 'DELETED' ? undefined : this.entry(id, event.slice);
    return this.put(id, next);
  }

  /**
   * Replace everything with a full list: a slice the list omits is gone, whatever events were missed.
   * Returns the keys whose slices changed.
   */
  relist(slices: readonly EndpointSlice[]): PoolKey[] {
    const listed = new Map<SliceId, CachedSlice | undefined>();
    for (const slice of slices) {
      const id = sliceId(slice);
      listed.set(id, this.entry(id, slice));
    }
    const changed = new Set<PoolKey>();
    for (const id of [...this.slices.keys()]) {
      if (!listed.has(id)) for (const key of this.put(id, undefined)) changed.add(key);
    }
    for (const [id, entry] of listed) {
      for (const key of this.put(id, entry)) changed.add(key);
    }
    return [...changed];
  }

  /** The pool slices of one key (empty when none). */
  slicesOf(key: PoolKey): CachedSlice[] {
    return [...(this.byKey.get(key)?.values() ?? [])];
  }

  keys(): PoolKey[] {
    return [...this.byKey.keys()];
  }

  has(id: SliceId): boolean {
    return this.slices.has(id);
  }

  get size(): number {
    return this.slices.size;
  }

  private entry(id: SliceId, slice: EndpointSlice): CachedSlice | undefined {
    const pool = this.classify(slice);
    return pool ? { id, key: pool.key, role: pool.role, slice } : undefined;
  }

  private put(id: SliceId, next: CachedSlice | undefined): PoolKey[] {
    const previous = this.slices.get(id);
    const changed = changedKeys(previous, next);
    if (previous) {
      const group = this.byKey.get(previous.key);
      // Stryker disable next-line OptionalChaining: equivalent, a cached slice's key always has its group
      group?.delete(id);
      // Stryker disable next-line OptionalChaining: equivalent, a cached slice's key always has its group
      if (group?.size === 0) this.byKey.delete(previous.key);
      this.slices.delete(id);
    }
    if (next) {
      this.slices.set(id, next);
      let group = this.byKey.get(next.key);
      if (!group) this.byKey.set(next.key, (group = new Map()));
      group.set(id, next);
    }
    return changed;
  }
}
