// The listed view routers read: only `live` and `frontendless` pools, a revision that grows with every
// change, completeness (with regions: each region's entry), and the change stream published to
// watchers (docs/contract.md §5, §7).
//
// The list body is serialized once per revision (and model filter) and reused: GET /pools is hot and
// serializing a large list dominates its cost (docs/design.md "Dependencies"). Each pool's JSON length is
// kept from its change, and the pools are kept sorted change by change, so a body is the pools' JSON written
// in order into one buffer of its exact size, in slices of a few milliseconds with a turn of the event loop between them
// (list-body.ts): at 100,000 pools nothing else waits for the whole 35 MB. A request that comes while a
// body is being written gets that body (its revision, whole), even when a change came meanwhile; only
// when none is being written does it start the body of the current revision (docs/contract.md §5
// "Which revision a reply holds"). Beside it, its gzip and
// br encodings, each compressed once (off the event loop, in zlib's thread pool) by the first request that
// asks for it, and an entity tag per encoding, so an unchanged list is answered 304 (docs/contract.md §5).
// Filters cannot thrash that cache (docs/contract.md §8): the unfiltered body has a place of its own, the
// filtered ones share FILTERED_BODIES places, least recently used first out, and a filter reads only the
// pools of its model (an index by model), so a flood of made-up filters costs each one small serialization.
import { createHash, randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { ListedPool, PoolKey, PoolList, RegionStatus, WatchEvent } from '../contract/index.js';
import { drive, driveNow, indexOf, insertAt, SLICE_MS, writeListBody, type ListEntry } from './list-body.js';

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

/** The content codings the GET /pools body is sent in. */
export type ContentCoding = 'identity' | 'gzip' | 'br';
export type Compressor = (coding: Exclude<ContentCoding, 'identity'>, bytes: Uint8Array) => Promise<Uint8Array<ArrayBuffer>>;

/** gzip at zlib's default level, br at quality 4: each about 5.5 % of a 100,000-pool body, in ~0.15 s and ~0.4 s (docs/design.md "Dependencies"). */
export const GZIP_LEVEL = 6;
/**
 * Filtered bodies kept per revision. Each pool has one model, so the model filters' bodies together are
 * at most the size of the unfiltered one, however many are kept.
 */
export const FILTERED_BODIES = 64;
export const BROTLI_QUALITY = 4;

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** zlib's asynchronous API: the work runs in libuv's thread pool, never on the event loop. */
export const compressBody: Compressor = (coding, bytes) =>
  coding === 'gzip'
    ? // Stryker disable next-line ObjectLiteral: level 6 is zlib's default, so no options compress alike
      gzipAsync(bytes, { level: GZIP_LEVEL })
    : brotliAsync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } });

/** One encoding of the GET /pools body and the entity tag of exactly those bytes (quoted, strong). */
export interface EncodedBody {
  etag: string;
  bytes: Promise<Uint8Array<ArrayBuffer>>;
}

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

/** A body of one revision and filter: its tag, its bytes once serialized, its compressions once started. */
interface CachedBody {
  /** Unquoted: the revision and a digest of the filter and completeness, which with it decide the bytes. */
  tag: string;
  /** The sequence number of its revision. */
  seq: number;
  /** Where it is cached: '' unfiltered, `m:<model>` filtered. */
  cacheKey: string;
  model: string | undefined;
  identity?: Uint8Array<ArrayBuffer>;
  /** While its bytes are being written over several turns. */
  writing?: Promise<Uint8Array<ArrayBuffer>>;
  compressed: Partial<Record<Exclude<ContentCoding, 'identity'>, Promise<Uint8Array<ArrayBuffer>>>>;
}

/** The unfiltered GET /pools body being written or written, and the sequence number of its revision. */
export interface ListBody {
  seq: number;
  revision: string;
  /** The bytes when they are written already (then the same as `bytes` resolves to). */
  ready: Uint8Array<ArrayBuffer> | undefined;
  bytes: Promise<Uint8Array<ArrayBuffer>>;
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
  /** Bodies still being written, by cache key: served until they are done, even after a change. */
  private readonly writing = new Map<string, CachedBody>();
  /** The keys of the items of each filter value (a pool's model): what a filter reads. */
  private readonly byModel = new Map<string, Set<PoolKey>>();
  private readonly listeners = new Set<ViewListener<E>>();
  private readonly shape: ViewShape<Item, L, E>;
  private readonly epoch: string;
  private readonly compress: Compressor;
  private readonly sliceMs: number;
  private compressionCount = 0;
  private serializationCount = 0;
  private seq = 0;
  private completeness: Completeness = { complete: false, reasons: ['starting'] };
  private batchDepth = 0;
  private batchDirty = false;
  /** The unfiltered body of this revision: no filter ever takes its place. */
  private unfiltered: CachedBody | undefined;
  /** Filtered bodies of this revision by filter, in the order of their last use (the first is evicted first). */
  private readonly filtered = new Map<string, CachedBody>();

  constructor(options: ListedViewOptions | ShapedViewOptions<Item, L, E> = {}) {
    this.shape = 'shape' in options ? options.shape : (POOL_SHAPE as unknown as ViewShape<Item, L, E>);
    this.epoch = options.epoch !== undefined ? String(options.epoch) : `${Date.now()}${String(randomInt(1_000_000)).padStart(6, '0')}`;
    this.compress = options.compress ?? compressBody;
    this.sliceMs = options.sliceMs ?? SLICE_MS;
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
    return this.compressionCount;
  }

  /** Bodies serialized so far (each revision and cached filter at most once). */
  get serializations(): number {
    return this.serializationCount;
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
    this.forgetBodies();
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
    const entry = this.cached(model);
    if (entry.identity === undefined) {
      this.serializationCount += 1;
      entry.identity = driveNow(this.writer(entry));
    }
    return entry.identity;
  }

  /**
   * The entity tag of the body `encoded` would answer now (quoted, strong): the same tag for the same
   * bytes. Costs no serialization, so a conditional request that matches never builds the body.
   */
  etag(model: string | undefined, coding: ContentCoding): string {
    return tagOf(this.serving(model), coding);
  }

  /**
   * The body in `coding` and its tag: the current revision's, or, while an earlier revision's body is
   * still being written and the current one is not started, that earlier one (docs/contract.md §5). The
   * compressed bytes are made once per body, by the first caller, and shared by every later one
   * (concurrent callers wait for the same compression).
   */
  encoded(model: string | undefined, coding: ContentCoding): EncodedBody {
    const entry = this.serving(model);
    const identity = this.identityOf(entry);
    if (coding === 'identity') return { etag: tagOf(entry, coding), bytes: identity };
    let bytes = entry.compressed[coding];
    if (bytes === undefined) {
      this.compressionCount += 1;
      // Compressed at once when the bytes are there (zlib's thread pool), else once they are written.
      const plain = entry.identity;
      bytes = plain !== undefined ? this.compress(coding, plain) : identity.then((written) => this.compress(coding, written));
      entry.compressed[coding] = bytes;
      // A failed compression is not kept: the next request tries again.
      bytes.catch(() => delete entry.compressed[coding]);
    }
    return { etag: tagOf(entry, coding), bytes };
  }

  /** The unfiltered body `encoded` would answer now, and its revision (a watch stream's first resync). */
  listBody(): ListBody {
    const entry = this.serving(undefined);
    const bytes = this.identityOf(entry);
    return { seq: entry.seq, revision: `${this.epoch}-${entry.seq}`, ready: entry.identity, bytes };
  }

  /** The unfiltered body of the current revision, started now if it is not (a `resync` event's data). */
  currentBody(): ListBody {
    const entry = this.cached(undefined);
    const bytes = this.identityOf(entry);
    return { seq: entry.seq, revision: `${this.epoch}-${entry.seq}`, ready: entry.identity, bytes };
  }

  /** The body to answer with: the current one once started, else one still being written, else the current one. */
  private serving(model: string | undefined): CachedBody {
    const current = this.cached(model);
    if (current.identity !== undefined || current.writing !== undefined) return current;
    return this.writing.get(current.cacheKey) ?? current;
  }

  /**
   * The body's bytes: written already, being written, or written from now on: the first slice at once
   * (a list that fits in one slice is written in this turn, as it always was), the rest a slice per turn.
   */
  private identityOf(entry: CachedBody): Promise<Uint8Array<ArrayBuffer>> {
    if (entry.identity !== undefined) return Promise.resolve(entry.identity);
    if (entry.writing === undefined) {
      this.serializationCount += 1;
      const writer = this.writer(entry);
      const first = writer.next();
      if (first.done) {
        entry.identity = first.value;
        return Promise.resolve(first.value);
      }
      this.writing.set(entry.cacheKey, entry);
      entry.writing = drive(writer).then((bytes) => {
        entry.identity ??= bytes;
        entry.writing = undefined;
        if (this.writing.get(entry.cacheKey) === entry) this.writing.delete(entry.cacheKey);
        return entry.identity;
      });
    }
    return entry.writing;
  }

  /** The writer of `entry`'s bytes, on the list as it is now (its revision's). */
  private writer(entry: CachedBody) {
    const { complete, regions } = this.completeness;
    // The list's own shape around one marker item gives the bytes before and after the items, in list()'s key order.
    const skeleton = JSON.stringify(this.shape.list({ complete, revision: this.revision, ...(regions ? { regions } : {}) }, [ITEMS_MARK as Item]));
    const [head, tail] = skeleton.split(JSON.stringify(ITEMS_MARK)) as [string, string];
    return writeListBody(head, this.entries(entry.model), tail, this.sliceMs);
  }

  private cached(model: string | undefined): CachedBody {
    if (model === undefined) return (this.unfiltered ??= this.newEntry('', model));
    const cacheKey = `m:${model}`;
    let entry = this.filtered.get(cacheKey);
    if (entry === undefined) {
      entry = this.newEntry(cacheKey, model);
      if (this.filtered.size >= FILTERED_BODIES) this.filtered.delete(this.filtered.keys().next().value!);
    } else {
      // Used again: to the end of the order, last to be evicted.
      this.filtered.delete(cacheKey);
    }
    this.filtered.set(cacheKey, entry);
    return entry;
  }

  private newEntry(cacheKey: string, model: string | undefined): CachedBody {
    const { complete, regions } = this.completeness;
    const digest = createHash('sha256')
      .update(JSON.stringify([cacheKey, complete, regions ?? null]))
      .digest('base64url')
      .slice(0, 16);
    return { tag: `${this.revision}.${digest}`, seq: this.seq, cacheKey, model, compressed: {} };
  }

  private forgetBodies(): void {
    this.unfiltered = undefined;
    this.filtered.clear();
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
      return;
    }
    this.bump();
    if (event.kind !== 'resync') event.data.revision = this.revision;
    this.publish(event);
  }

  private bump(): void {
    this.seq += 1;
    this.forgetBodies();
  }

  private publish(event: E): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** A strong tag per coding: each coding's bytes differ, so each has its own tag. */
function tagOf(entry: CachedBody, coding: ContentCoding): string {
  return coding === 'identity' ? `"${entry.tag}"` : `"${entry.tag}+${coding}"`;
}

/** What of the regions' entries a watcher must hear of at once: which are complete, which dropped. */
function regionsShape(regions: readonly RegionStatus[] | undefined): string {
  return regions?.map((r) => `${r.name}:${r.complete}:${r.dropped}`).join(',') ?? '';
}
