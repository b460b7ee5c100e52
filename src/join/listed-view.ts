// The listed view routers read: only `live` and `frontendless` pools, a revision that grows with every
// change, completeness (with regions: each region's entry), and the change stream published to
// watchers (docs/contract.md §5, §7).
//
// Each pool's JSON length is kept from its change, and the pools are kept sorted change by change, so a
// GET /pools body is the pools' JSON written in order into one buffer of its exact size (list-body.ts),
// once per revision and filter (list-bodies.ts). A filter reads only the pools of its model (an index by
// model), so a flood of made-up filters costs each one small serialization (docs/contract.md §8).
import { createHash, randomInt } from 'node:crypto';
import type { ListedPool, PoolKey, PoolList, RegionStatus, WatchEvent } from '../contract/index.js';
import { ListBodies, type BodyOfRevision, type ContentCoding, type Compressor, type EncodedBody } from './list-bodies.js';
import { indexOf, insertAt, SLICE_MS, writeListBody, type ListEntry } from './list-body.js';

export interface Completeness {
  complete: boolean;
  /** Why the view may be missing pools, one line per source that is not synced. */
  reasons: string[];
  /** With regions configured: one entry per region, sorted by name. */
  regions?: RegionStatus[];
}

export type ViewListener<E = WatchEvent> = (event: E) => void;

/** What every list body holds besides its items. */
export interface ViewListBase {
  complete: boolean;
  revision: string;
  regions?: RegionStatus[];
}

/** What every event of a view holds: its kind and, in its data, the revision. */
export interface ViewEventBase {
  kind: 'resync' | 'upsert' | 'delete';
  data: { revision: string };
}

/**
 * What a view lists (docs/contract.md §5 pools, §10 routers): how its body, its `upsert` and `delete`
 * events are made of its items, and the one field a filter reads (a pool's model, a router's region).
 */
export interface ViewShape<Item, L extends ViewListBase, E extends ViewEventBase> {
  list(base: ViewListBase, items: Item[]): L;
  upsert(item: Item): E;
  remove(item: Item): E;
  filterOf(item: Item): string;
}

/** The pools' view: GET /pools and /pools/watch. */
export const POOL_SHAPE: ViewShape<ListedPool, PoolList, WatchEvent> = {
  list: (base, pools) => {
    const { complete, revision, regions } = base;
    return { complete, revision, pools, ...(regions ? { regions } : {}) };
  },
  upsert: (pool) => ({ kind: 'upsert', data: { revision: '', pool } }),
  remove: ({ cluster_id, namespace, name }) => ({ kind: 'delete', data: { revision: '', pool: { cluster_id, namespace, name } } }),
  filterOf: (pool) => pool.model,
};

/** Stands for the items in a list's skeleton (serialize): no item's JSON is this string. */
const ITEMS_MARK = '\u0000items\u0000';

export interface ListedViewOptions {
  /**
   * Prefix of revisions (default: the start time in ms followed by six random digits, so revisions grow
   * across restarts of this replica and two replicas started in the same millisecond differ).
   */
  epoch?: number;
  /** Compresses a body (default: compressBody); each call is counted in `compressions`. */
  compress?: Compressor;
  /** How long a slice of writing a body may run before the event loop gets a turn (default SLICE_MS; 0: every few entries). */
  sliceMs?: number;
}

export interface ShapedViewOptions<Item, L extends ViewListBase, E extends ViewEventBase> extends ListedViewOptions {
  shape: ViewShape<Item, L, E>;
}

/** The unfiltered GET /pools body being written or written, and the sequence number of its revision. */
export interface ListBody extends BodyOfRevision {
  revision: string;
}

/**
 * The pools' view by default; with a shape, any list of items by key (the routers', docs/contract.md §10).
 * A filter (`?model=` of pools, `?region=` of routers) reads the field the shape names.
 */
export class ListedView<Item = ListedPool, L extends ViewListBase = PoolList, E extends ViewEventBase = WatchEvent> {
  /**
   * Each item with its JSON's length in bytes (a body is written into a buffer of its exact size): not
   * the JSON itself, which for registrations near the size limit would hold a second copy of every pool
   * (docs/operations.md "Sizing"), nor a digest of it (a repeat is told by serializing the item before).
   */
  private readonly pools = new Map<PoolKey, ListEntry<Item>>();
  /**
   * Every entry sorted by key, kept in order change by change (a binary search and one splice); undefined
   * after items were added inside a batch (a relist), until the next body or list sorts them once.
   */
  private order: ListEntry<Item>[] | undefined = [];
  /** The keys of the items of each filter value (a pool's model): what a filter reads. */
  private readonly byModel = new Map<string, Set<PoolKey>>();
  private readonly listeners = new Set<ViewListener<E>>();
  private readonly shape: ViewShape<Item, L, E>;
  private readonly epoch: string;
  private readonly sliceMs: number;
  private readonly bodies: ListBodies;
  private seq = 0;
  private completeness: Completeness = { complete: false, reasons: ['starting'] };
  private batchDepth = 0;
  private batchDirty = false;
  /** The events of a `group` under way, published when it ends. */
  private grouped: E[] | undefined;

  constructor(options: ListedViewOptions | ShapedViewOptions<Item, L, E> = {}) {
    this.shape = 'shape' in options ? options.shape : (POOL_SHAPE as unknown as ViewShape<Item, L, E>);
    this.epoch = options.epoch !== undefined ? String(options.epoch) : `${Date.now()}${String(randomInt(1_000_000)).padStart(6, '0')}`;
    this.sliceMs = options.sliceMs ?? SLICE_MS;
    this.bodies = new ListBodies({ tagOf: (cacheKey) => this.tagOf(cacheKey), writer: (model) => this.writer(model) }, options.compress);
  }

  get revision(): string {
    return `${this.epoch}-${this.seq}`;
  }

  /**
   * The sequence number of a revision this view issued (its epoch, a sequence not past the current one);
   * undefined for any other string, such as a revision of another replica or of an earlier process.
   */
  sequenceOf(revision: string): number | undefined {
    const prefix = `${this.epoch}-`;
    if (!revision.startsWith(prefix)) return undefined;
    const digits = revision.slice(prefix.length);
    if (!/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
    const seq = Number(digits);
    return seq <= this.seq ? seq : undefined;
  }

  /** Bodies compressed so far (each revision, filter and coding at most once). */
  get compressions(): number {
    return this.bodies.compressions;
  }

  /** Bodies serialized so far (each revision and cached filter at most once). */
  get serializations(): number {
    return this.bodies.serializations;
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
  update(key: PoolKey, pool: Item | null): void {
    const current = this.pools.get(key);
    const { shape } = this;
    if (pool === null) {
      if (!current) return;
      this.pools.delete(key);
      // A relist may drop pools by the thousand: one sort afterwards, not a splice each.
      if (this.batchDepth > 0) this.order = undefined;
      else if (this.order) this.order.splice(indexOf(this.order, key), 1);
      this.unindex(key, shape.filterOf(current.pool));
      this.changed(shape.remove(current.pool));
      return;
    }
    const json = JSON.stringify(pool);
    const bytes = Buffer.byteLength(json);
    // A repeat (a relist, a registration whose listed form did not change) publishes nothing. The item
    // before is serialized again only when the lengths match: a new item, or a change of length, costs
    // one serialization, and nothing but the length is kept per item (no digest, no JSON).
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, a shortcut: items of different lengths differ in JSON too
    if (current !== undefined && current.bytes === bytes && JSON.stringify(current.pool) === json) return;
    const entry: ListEntry<Item> = { key, pool, bytes };
    this.pools.set(key, entry);
    if (this.order) {
      if (current) this.order[indexOf(this.order, key)] = entry;
      // A relist adds pools by the thousand: one sort afterwards, not a splice each.
      else if (this.batchDepth > 0) this.order = undefined;
      else insertAt(this.order, entry);
    }
    const filter = shape.filterOf(pool);
    if (current === undefined || shape.filterOf(current.pool) !== filter) {
      if (current) this.unindex(key, shape.filterOf(current.pool));
      let keys = this.byModel.get(filter);
      if (keys === undefined) this.byModel.set(filter, (keys = new Set()));
      keys.add(key);
    }
    this.changed(shape.upsert(pool));
  }

  /** The keys listed now. */
  keys(): PoolKey[] {
    return [...this.pools.keys()];
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
      this.endBatch();
    }
  }

  /** `batch` for a relist applied over several turns (a large store snapshot): the resync follows when `fn` settles. */
  async batchAsync(fn: () => Promise<void>): Promise<void> {
    this.batchDepth += 1;
    try {
      await fn();
    } finally {
      this.endBatch();
    }
  }

  /**
   * Many changes at once, each still published as its own `upsert` or `delete` (a store snapshot's leases
   * as they are read): under one new revision, once `fn` returns, the order sorted once afterwards rather
   * than spliced per pool. Inside a batch they are the batch's (its `resync` carries them).
   */
  group(fn: () => void): void {
    if (this.batchDepth > 0) return fn();
    const events: E[] = [];
    this.grouped = events;
    this.batchDepth += 1;
    try {
      fn();
    } finally {
      this.batchDepth -= 1;
      this.grouped = undefined;
      if (this.batchDirty) this.bump();
      this.batchDirty = false;
      for (const event of events) {
        event.data.revision = this.revision;
        this.publish(event);
      }
    }
  }

  private endBatch(): void {
    this.batchDepth -= 1;
    if (this.batchDepth === 0) {
      if (this.batchDirty) this.bump();
      this.batchDirty = false;
      this.publish(this.resyncEvent());
    }
  }

  private resyncEvent(): E {
    return { kind: 'resync', data: this.list() } as unknown as E;
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
    this.bodies.forget();
    if (next.complete !== before.complete || regionsShape(next.regions) !== regionsShape(before.regions)) {
      this.bump();
      this.publish(this.resyncEvent());
    }
  }

  list(model?: string): L {
    const pools = this.entries(model).map((entry) => entry.pool);
    const { complete, regions } = this.completeness;
    return this.shape.list({ complete, revision: this.revision, ...(regions ? { regions } : {}) }, pools);
  }

  /** The entries of the list (of one model), sorted by key: a copy, which later changes leave as it is. */
  private entries(model: string | undefined): ListEntry<Item>[] {
    if (model !== undefined) return [...(this.byModel.get(model) ?? [])].sort().map((key) => this.pools.get(key)!);
    this.order ??= [...this.pools.keys()].sort().map((key) => this.pools.get(key)!);
    return this.order.slice();
  }

  /**
   * The GET /pools body of the current revision, written now in one go (for callers that cannot wait:
   * tests, small views); the server's replies use `encoded`, which never writes a whole large list in one turn.
   */
  body(model?: string): Uint8Array<ArrayBuffer> {
    return this.bodies.body(model);
  }

  /**
   * The entity tag of the body `encoded` would answer now (quoted, strong): the same tag for the same
   * bytes. Costs no serialization, so a conditional request that matches never builds the body.
   */
  etag(model: string | undefined, coding: ContentCoding): string {
    return this.bodies.etag(model, coding);
  }

  /**
   * The body in `coding` and its tag: the current revision's, or one still being written
   * (docs/contract.md §5 "Which revision a reply holds"), each coding compressed once (list-bodies.ts).
   */
  encoded(model: string | undefined, coding: ContentCoding): EncodedBody {
    return this.bodies.encoded(model, coding);
  }

  /** The unfiltered body `encoded` would answer now, and its revision (a watch stream's first resync). */
  listBody(): ListBody {
    return this.withRevision(this.bodies.served());
  }

  /** The unfiltered body of the current revision, started now if it is not (a `resync` event's data). */
  currentBody(): ListBody {
    return this.withRevision(this.bodies.current());
  }

  private withRevision(body: BodyOfRevision): ListBody {
    return { ...body, revision: `${this.epoch}-${body.seq}` };
  }

  /** The writer of a body (of one model) on the list as it is now (its revision's). */
  private writer(model: string | undefined) {
    const { complete, regions } = this.completeness;
    // The list's own shape around one marker item gives the bytes before and after the items, in list()'s key order.
    const skeleton = JSON.stringify(this.shape.list({ complete, revision: this.revision, ...(regions ? { regions } : {}) }, [ITEMS_MARK as Item]));
    const [head, tail] = skeleton.split(JSON.stringify(ITEMS_MARK)) as [string, string];
    return writeListBody(head, this.entries(model), tail, this.sliceMs);
  }

  /** The current revision's tag of the body at `cacheKey`: the revision and a digest of what else decides its bytes. */
  private tagOf(cacheKey: string): { tag: string; seq: number } {
    const { complete, regions } = this.completeness;
    const digest = createHash('sha256')
      .update(JSON.stringify([cacheKey, complete, regions ?? null]))
      .digest('base64url')
      .slice(0, 16);
    return { tag: `${this.revision}.${digest}`, seq: this.seq };
  }

  private unindex(key: PoolKey, model: string): void {
    const keys = this.byModel.get(model)!;
    keys.delete(key);
    if (keys.size === 0) this.byModel.delete(model);
  }

  subscribe(listener: ViewListener<E>): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private changed(event: E): void {
    if (this.batchDepth > 0) {
      // The revision moves when the batch ends; until then the body (and its tag) stays the one of this
      // revision, so a GET /pools served between two batches of a snapshot costs no new serialization.
      this.batchDirty = true;
      this.grouped?.push(event);
      return;
    }
    this.bump();
    if (event.kind !== 'resync') event.data.revision = this.revision;
    this.publish(event);
  }

  private bump(): void {
    this.seq += 1;
    this.bodies.forget();
  }

  private publish(event: E): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** What of the regions' entries a watcher must hear of at once: which are complete, which dropped. */
function regionsShape(regions: readonly RegionStatus[] | undefined): string {
  return regions?.map((r) => `${r.name}:${r.complete}:${r.dropped}`).join(',') ?? '';
}
