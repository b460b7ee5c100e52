// The GET /pools body written from the pools' JSON, kept sorted, in slices: a 100,000-pool list is about
// 35 MB, and writing it in one turn held the event loop for 0.4–1 s (every other request, heartbeats
// and /healthz included, waited). The writer is a generator that yields whenever it has run for SLICE_MS;
// `drive` resumes it a turn later (setImmediate: I/O callbacks run in between), `driveNow` runs it to the
// end at once (for callers that cannot wait). The entries it is given are a copy taken at one revision
// and entries are never changed in place (a change replaces the entry), so the body is that revision's
// list, whatever changes come while it is written.
import type { PoolKey } from '../contract/index.js';

/**
 * One listed item (a pool, a router): its key, its value, and its JSON's length in UTF-8 bytes. The JSON
 * itself is not kept: for registrations near the size limit it would be a second copy of every pool
 * (docs/operations.md "Sizing"); it is written again, a pool at a time, into each body.
 */
export interface ListEntry<Item = unknown> {
  readonly key: PoolKey;
  readonly pool: Item;
  readonly bytes: number;
}

/** How long one slice of writing may hold the event loop (ms). */
export const SLICE_MS = 4;
/** Entries written between two looks at the clock. */
const CHECK_EVERY = 64;
const COMMA = 0x2c;

/**
 * `head`, the entries' JSON joined by commas, `tail`: exactly JSON.stringify of the list. Sized first
 * (every entry knows its JSON's byte length), so the bytes are written once into one buffer, with no
 * string of the whole list and no copy. The buffer is not zero-filled first (at 100,000 pools, filling
 * 35 MB took 6.4 ms of the first slice): every byte of it is written below, each entry's length checked.
 */
export function* writeListBody(head: string, entries: readonly ListEntry<unknown>[], tail: string, sliceMs = SLICE_MS): Generator<void, Uint8Array<ArrayBuffer>, void> {
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(entries.length - 1, 0);
  for (const entry of entries) size += entry.bytes;
  const out = Buffer.allocUnsafeSlow(size);
  const body = new Uint8Array(out.buffer, out.byteOffset, size);
  let at = out.write(head, 0);
  let sliceEnd = performance.now() + sliceMs;
  for (let i = 0; i < entries.length; i += 1) {
    if (i > 0) out[at++] = COMMA;
    const entry = entries[i]!;
    const written = out.write(JSON.stringify(entry.pool), at);
    // An entry is never changed in place (a change replaces it), so its JSON has the length it was stored with.
    if (written !== entry.bytes) throw new Error(`list entry ${entry.key} changed after it was stored`);
    at += written;
    if (i % CHECK_EVERY === CHECK_EVERY - 1 && performance.now() >= sliceEnd) {
      yield;
      sliceEnd = performance.now() + sliceMs;
    }
  }
  out.write(tail, at);
  return body;
}

/** Runs the rest of a writer (its first slice already run) a slice per turn of the event loop. */
export async function drive<T>(writer: Generator<void, T, void>): Promise<T> {
  for (;;) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const step = writer.next();
    if (step.done) return step.value;
  }
}

/** Runs a writer to its end in this turn. */
export function driveNow<T>(writer: Generator<void, T, void>): T {
  for (let step = writer.next(); ; step = writer.next()) if (step.done) return step.value;
}

/** The index of `key` in `sorted` (sorted by key), or where it would go. */
function lowerBound(sorted: readonly ListEntry<unknown>[], key: PoolKey): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]!.key < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The index of the entry of `key`, which `sorted` holds. */
export function indexOf(sorted: readonly ListEntry<unknown>[], key: PoolKey): number {
  const at = lowerBound(sorted, key);
  if (sorted[at]?.key !== key) throw new Error(`list order lost ${key}`);
  return at;
}

/** Puts a new entry in its place (its key is not in `sorted`). */
export function insertAt<Item>(sorted: ListEntry<Item>[], entry: ListEntry<Item>): void {
  sorted.splice(lowerBound(sorted, entry.key), 0, entry);
}
