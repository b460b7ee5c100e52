// The listed view routers read: only `live` and `frontendless` pools, a revision that grows with every
// change, completeness (with regions: each region's entry), and the change stream published to
// watchers (docs/contract.md §5, §7).
//
// The list body is serialized once per revision (and model filter) and reused: GET /pools is hot and
// JSON.stringify of a large list dominates its cost (docs/design.md "Dependencies"). Beside it, its gzip and
// br encodings, each compressed once (off the event loop, in zlib's thread pool) by the first request that
// asks for it, and an entity tag per encoding, so an unchanged list is answered 304 (docs/contract.md §5).
import { createHash, randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { ListedPool, PoolKey, PoolList, RegionStatus, WatchEvent } from '../contract/index.js';

export interface Completeness {
  complete: boolean;
  /** Why the view may be missing pools, one line per source that is not synced. */
  reasons: string[];
  /** With regions configured: one entry per region, sorted by name. */
  regions?: RegionStatus[];
}

export type ViewListener = (event: WatchEvent) => void;

/** The content codings the GET /pools body is sent in. */
export type ContentCoding = 'identity' | 'gzip' | 'br';
export type Compressor = (coding: Exclude<ContentCoding, 'identity'>, bytes: Uint8Array) => Promise<Uint8Array<ArrayBuffer>>;

/** gzip at zlib's default level, br at quality 4: each about 5.5 % of a 100,000-pool body, in ~0.15 s and ~0.4 s (docs/design.md "Dependencies"). */
export const GZIP_LEVEL = 6;
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
}

/** A body of one revision and filter: its tag, its bytes once serialized, its compressions once started. */
interface CachedBody {
  /** Unquoted: the revision and a digest of the filter and completeness, which with it decide the bytes. */
  tag: string;
  model: string | undefined;
  identity?: Uint8Array<ArrayBuffer>;
  compressed: Partial<Record<Exclude<ContentCoding, 'identity'>, Promise<Uint8Array<ArrayBuffer>>>>;
}

export class ListedView {
  private readonly pools = new Map<PoolKey, { pool: ListedPool; json: string }>();
  private readonly listeners = new Set<ViewListener>();
  private readonly epoch: string;
  private readonly compress: Compressor;
  private compressionCount = 0;
  private seq = 0;
  private completeness: Completeness = { complete: false, reasons: ['starting'] };
  private batchDepth = 0;
  private batchDirty = false;
  private bodyCache = new Map<string, CachedBody>();

  constructor(options: ListedViewOptions = {}) {
    this.epoch = options.epoch !== undefined ? String(options.epoch) : `${Date.now()}${String(randomInt(1_000_000)).padStart(6, '0')}`;
    this.compress = options.compress ?? compressBody;
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
      this.publish({ kind: 'resync', data: this.list() });
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
    return this.identity(this.cached(model));
  }

  /**
   * The entity tag of the body in `coding` now (quoted, strong): the same tag for the same bytes. Costs no
   * serialization, so a conditional request that matches never builds the body.
   */
  etag(model: string | undefined, coding: ContentCoding): string {
    return tagOf(this.cached(model), coding);
  }

  /**
   * The body in `coding` and its tag. The compressed bytes are made once per revision and filter, by the
   * first caller, and shared by every later one (concurrent callers wait for the same compression).
   */
  encoded(model: string | undefined, coding: ContentCoding): EncodedBody {
    const entry = this.cached(model);
    const identity = this.identity(entry);
    if (coding === 'identity') return { etag: tagOf(entry, coding), bytes: Promise.resolve(identity) };
    let bytes = entry.compressed[coding];
    if (bytes === undefined) {
      this.compressionCount += 1;
      bytes = this.compress(coding, identity);
      entry.compressed[coding] = bytes;
      // A failed compression is not kept: the next request tries again.
      bytes.catch(() => delete entry.compressed[coding]);
    }
    return { etag: tagOf(entry, coding), bytes };
  }

  private cached(model: string | undefined): CachedBody {
    const cacheKey = model === undefined ? '' : `m:${model}`;
    let entry = this.bodyCache.get(cacheKey);
    if (entry === undefined) {
      const { complete, regions } = this.completeness;
      const digest = createHash('sha256')
        .update(JSON.stringify([cacheKey, complete, regions ?? null]))
        .digest('base64url')
        .slice(0, 16);
      entry = { tag: `${this.revision}.${digest}`, model, compressed: {} };
      if (this.bodyCache.size > 64) this.bodyCache.clear();
      this.bodyCache.set(cacheKey, entry);
    }
    return entry;
  }

  private identity(entry: CachedBody): Uint8Array<ArrayBuffer> {
    entry.identity ??= new TextEncoder().encode(JSON.stringify(this.list(entry.model)));
    return entry.identity;
  }

  subscribe(listener: ViewListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private changed(event: WatchEvent): void {
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
    this.bodyCache.clear();
  }

  private publish(event: WatchEvent): void {
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
