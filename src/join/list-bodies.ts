// The GET /pools bodies of a listed view (listed-view.ts): each serialized once per revision and filter and
// reused, because GET /pools is hot and serializing a large list dominates its cost (docs/design.md
// "Dependencies"). A body is written in slices of a few milliseconds with a turn of the event loop between
// them (list-body.ts): at 100,000 pools nothing else waits for the whole 35 MB. A request that comes while
// a body is being written gets that body (its revision, whole), even when a change came meanwhile; only
// when none is being written does it start the body of the current revision (docs/contract.md §5 "Which
// revision a reply holds"). Beside it, its gzip and br encodings, each compressed once (off the event
// loop, in zlib's thread pool) by the first request that asks for it, and an entity tag per encoding, so an
// unchanged list is answered 304 (docs/contract.md §5). Filters cannot thrash this cache (docs/contract.md
// §8): the unfiltered body has a place of its own, the filtered ones share FILTERED_BODIES places, least
// recently used first out.
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { drive, driveNow } from './list-body.js';

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

/** The unfiltered body being written or written, and the sequence number of its revision. */
export interface BodyOfRevision {
  seq: number;
  /** The bytes when they are written already (then the same as `bytes` resolves to). */
  ready: Uint8Array<ArrayBuffer> | undefined;
  bytes: Promise<Uint8Array<ArrayBuffer>>;
}

/** What the bodies are made of: the view as it is now. */
export interface BodySource {
  /** The tag (unquoted) and sequence number of the current revision's body at `cacheKey`. */
  tagOf(cacheKey: string): { tag: string; seq: number };
  /** A writer of the current revision's body (of one model): the list as it is now. */
  writer(model: string | undefined): Generator<void, Uint8Array<ArrayBuffer>, void>;
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

/** The bodies of the current revision (and those of earlier ones still being written). */
export class ListBodies {
  /** Bodies still being written, by cache key: served until they are done, even after a change. */
  private readonly writing = new Map<string, CachedBody>();
  /** The unfiltered body of this revision: no filter ever takes its place. */
  private unfiltered: CachedBody | undefined;
  /** Filtered bodies of this revision by filter, in the order of their last use (the first is evicted first). */
  private readonly filtered = new Map<string, CachedBody>();
  private compressionCount = 0;
  private serializationCount = 0;

  constructor(
    private readonly source: BodySource,
    private readonly compress: Compressor = compressBody,
  ) {}

  /** Bodies compressed so far (each revision, filter and coding at most once). */
  get compressions(): number {
    return this.compressionCount;
  }

  /** Bodies serialized so far (each revision and cached filter at most once). */
  get serializations(): number {
    return this.serializationCount;
  }

  /** The revision changed (or what else decides the bytes): the bodies kept are no longer current. */
  forget(): void {
    this.unfiltered = undefined;
    this.filtered.clear();
  }

  /** The current revision's body, written now in one go. */
  body(model: string | undefined): Uint8Array<ArrayBuffer> {
    const entry = this.cached(model);
    if (entry.identity === undefined) {
      this.serializationCount += 1;
      entry.identity = driveNow(this.source.writer(entry.model));
    }
    return entry.identity;
  }

  /** The entity tag of the body `encoded` would answer now (quoted, strong); costs no serialization. */
  etag(model: string | undefined, coding: ContentCoding): string {
    return tagOf(this.serving(model), coding);
  }

  /**
   * The body in `coding` and its tag: the current revision's, or, while an earlier revision's body is
   * still being written and the current one is not started, that earlier one. The compressed bytes are
   * made once per body, by the first caller, and shared by every later one (concurrent callers wait for
   * the same compression).
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

  /** The unfiltered body `encoded` would answer now. */
  served(): BodyOfRevision {
    return this.ofRevision(this.serving(undefined));
  }

  /** The unfiltered body of the current revision, started now if it is not. */
  current(): BodyOfRevision {
    return this.ofRevision(this.cached(undefined));
  }

  private ofRevision(entry: CachedBody): BodyOfRevision {
    const bytes = this.identityOf(entry);
    return { seq: entry.seq, ready: entry.identity, bytes };
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
      const writer = this.source.writer(entry.model);
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
    return { ...this.source.tagOf(cacheKey), cacheKey, model, compressed: {} };
  }
}

/** A strong tag per coding: each coding's bytes differ, so each has its own tag. */
function tagOf(entry: CachedBody, coding: ContentCoding): string {
  return coding === 'identity' ? `"${entry.tag}"` : `"${entry.tag}+${coding}"`;
}
