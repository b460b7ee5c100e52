// The GET /pools body's encodings and entity tags in the listed view (docs/contract.md §5): a strong tag
// per revision, filter, completeness and coding (the same bytes, the same tag), gzip and br made once per
// revision and filter and shared by concurrent callers, and the revisions a resuming watch may name.
import { promisify } from 'node:util';
import { brotliCompressSync, brotliDecompress, constants, gunzip, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { poolKey } from '../../src/contract/index.js';
import { BROTLI_QUALITY, compressBody, FILTERED_BODIES, GZIP_LEVEL, type Compressor } from '../../src/join/list-bodies.js';
import { ListedView } from '../../src/join/listed-view.js';
import { pool } from '../support/listed-pool.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A compressor that records its calls and answers when the test says. */
function heldCompressor() {
  const calls: { coding: string; bytes: Uint8Array; resolve: (b: Uint8Array<ArrayBuffer>) => void; reject: (e: Error) => void }[] = [];
  const compress: Compressor = (coding, bytes) =>
    new Promise((resolve, reject) => {
      calls.push({ coding, bytes, resolve, reject });
    });
  return { calls, compress };
}

describe('ListedView: entity tags', () => {
  it('are strong, quoted, one per coding, and stay while nothing changes', () => {
    const view = new ListedView({ epoch: 9 });
    const identity = view.etag(undefined, 'identity');
    expect(identity).toMatch(/^"9-0\.[A-Za-z0-9_-]{16}"$/);
    expect(view.etag(undefined, 'gzip')).toBe(`${identity.slice(0, -1)}+gzip"`);
    expect(view.etag(undefined, 'br')).toBe(`${identity.slice(0, -1)}+br"`);
    expect(view.etag(undefined, 'identity')).toBe(identity);
    expect(view.encoded(undefined, 'identity').etag).toBe(identity);
    expect(view.encoded(undefined, 'gzip').etag).toBe(view.etag(undefined, 'gzip'));
  });

  it('change with the revision, the filter and the completeness, and only with what changes the bytes', () => {
    const view = new ListedView({ epoch: 9 });
    const tags = new Set<string>();
    const add = (tag: string) => {
      expect(tags.has(tag)).toBe(false);
      tags.add(tag);
    };
    add(view.etag(undefined, 'identity'));
    add(view.etag('m1', 'identity'));
    add(view.etag('m2', 'identity'));
    view.update(poolKey(pool('a')), pool('a'));
    add(view.etag(undefined, 'identity'));
    // Completeness without a new revision: only the regions' reasons; the bytes change, so the tag does.
    view.setCompleteness({ complete: false, reasons: ['x'], regions: [{ name: 'r1', complete: false, dropped: false, reason: 'one' }] });
    const before = view.etag(undefined, 'identity');
    add(before);
    view.setCompleteness({ complete: false, reasons: ['x'], regions: [{ name: 'r1', complete: false, dropped: false, reason: 'two' }] });
    const revision = view.revision;
    const after = view.etag(undefined, 'identity');
    add(after);
    expect(view.revision).toBe(revision);
    // The reasons alone are not in the body: the tag stays.
    view.setCompleteness({ complete: false, reasons: ['y'], regions: [{ name: 'r1', complete: false, dropped: false, reason: 'two' }] });
    expect(view.etag(undefined, 'identity')).toBe(after);
  });

  it('a completeness equal to the current one keeps the cached body and tag; any other change of it does not', () => {
    const view = new ListedView({ epoch: 9 });
    const regions = [{ name: 'r1', complete: false, dropped: false, reason: 'one' }];
    view.setCompleteness({ complete: false, reasons: ['a', 'b'], regions });
    const body = view.body();
    view.setCompleteness({ complete: false, reasons: ['a', 'b'], regions: [{ ...regions[0]! }] });
    expect(view.body()).toBe(body);
    for (const next of [
      { complete: false, reasons: ['a', 'c'], regions },
      { complete: false, reasons: ['a'], regions },
      { complete: false, reasons: ['a'], regions: [{ ...regions[0]!, reason: 'two' }] },
    ]) {
      const before = view.body();
      view.setCompleteness(next);
      expect(view.body(), JSON.stringify(next)).not.toBe(before);
    }
  });

  it('keeps the bodies of the FILTERED_BODIES filters used last: a new one evicts the least recently used', () => {
    const view = new ListedView({ epoch: 9 });
    const first = view.body('f0');
    const second = view.body('f1');
    for (let i = 2; i < FILTERED_BODIES; i++) view.body(`f${i}`);
    expect(view.serializations).toBe(FILTERED_BODIES);
    // f0 used again: f1 is now the least recently used, and the one a new filter evicts.
    expect(view.body('f0')).toBe(first);
    view.body(`f${FILTERED_BODIES}`);
    expect(view.body('f0')).toBe(first);
    expect(view.serializations).toBe(FILTERED_BODIES + 1);
    expect(view.body('f1')).not.toBe(second);
    expect(view.serializations).toBe(FILTERED_BODIES + 2);
  });

  it('a flood of distinct filters costs one serialization each, and never evicts the unfiltered body or its encodings', async () => {
    const view = new ListedView({ epoch: 9 });
    for (let i = 0; i < 10; i++) view.update(poolKey(pool(`p${i}`)), pool(`p${i}`, { model: `m${i % 3}` }));
    const plain = view.body();
    const gzip = view.encoded(undefined, 'gzip').bytes;
    const tag = view.etag(undefined, 'br');
    const br = view.encoded(undefined, 'br').bytes;
    await Promise.all([gzip, br]);
    const [serialized, compressed] = [view.serializations, view.compressions];
    for (let i = 0; i < 1000; i++) {
      view.etag(`nope-${i}`, 'identity');
      view.body(`nope-${i}`);
      view.body(`nope-${i}`);
    }
    expect(view.serializations - serialized).toBe(1000);
    expect(view.body()).toBe(plain);
    expect(view.encoded(undefined, 'gzip').bytes).toBe(gzip);
    expect(view.encoded(undefined, 'br')).toEqual({ etag: tag, bytes: br });
    expect(view.serializations - serialized).toBe(1000);
    expect(view.compressions).toBe(compressed);
    // A change still makes new bodies for everyone.
    view.update(poolKey(pool('p0')), null);
    expect(view.body()).not.toBe(plain);
  });

  it('differ between views of different epochs at the same sequence', () => {
    expect(new ListedView({ epoch: 1 }).etag(undefined, 'identity')).not.toBe(new ListedView({ epoch: 2 }).etag(undefined, 'identity'));
  });
});

describe('ListedView: encodings', () => {
  it('serves the identity bytes of body(), and compresses them once per revision, filter and coding', async () => {
    const held = heldCompressor();
    const view = new ListedView({ epoch: 3, compress: held.compress });
    view.update(poolKey(pool('a')), pool('a'));
    expect(await view.encoded(undefined, 'identity').bytes).toBe(view.body());
    expect(view.compressions).toBe(0);

    const first = view.encoded(undefined, 'gzip').bytes;
    const second = view.encoded(undefined, 'gzip').bytes;
    expect(second).toBe(first); // concurrent callers share one compression
    expect(held.calls.map((c) => c.coding)).toEqual(['gzip']);
    expect(held.calls[0]!.bytes).toBe(view.body());
    held.calls[0]!.resolve(new Uint8Array([1, 2]));
    expect([...(await first)]).toEqual([1, 2]);
    expect([...(await view.encoded(undefined, 'gzip').bytes)]).toEqual([1, 2]);

    view.encoded(undefined, 'br');
    view.encoded('model-a', 'gzip');
    expect(held.calls.map((c) => c.coding)).toEqual(['gzip', 'br', 'gzip']);
    expect(text(held.calls[2]!.bytes)).toBe(text(view.body('model-a')));
    expect(view.compressions).toBe(3);

    view.update(poolKey(pool('b')), pool('b'));
    view.encoded(undefined, 'gzip');
    expect(held.calls).toHaveLength(4);
    expect(JSON.parse(text(held.calls[3]!.bytes)).pools).toHaveLength(2);
    expect(view.compressions).toBe(4);
  });

  it('compresses again after a compression failed', async () => {
    const held = heldCompressor();
    const view = new ListedView({ epoch: 3, compress: held.compress });
    const failed = view.encoded(undefined, 'br').bytes;
    held.calls[0]!.reject(new Error('zlib broke'));
    await expect(failed).rejects.toThrow('zlib broke');
    view.encoded(undefined, 'br');
    expect(held.calls).toHaveLength(2);
  });

  it('a stale compression that fails does not drop the current one', async () => {
    const held = heldCompressor();
    const view = new ListedView({ epoch: 3, compress: held.compress });
    const stale = view.encoded(undefined, 'br').bytes;
    view.update(poolKey(pool('a')), pool('a'));
    const current = view.encoded(undefined, 'br').bytes;
    held.calls[0]!.reject(new Error('old'));
    await expect(stale).rejects.toThrow('old');
    expect(view.encoded(undefined, 'br').bytes).toBe(current);
    expect(held.calls).toHaveLength(2);
  });

  it('compresses with zlib by default: gzip and br decode to the identity bytes', async () => {
    const view = new ListedView({ epoch: 3 });
    for (const name of ['a', 'b', 'c']) view.update(poolKey(pool(name)), pool(name));
    const identity = Buffer.from(view.body());
    const gz = await view.encoded(undefined, 'gzip').bytes;
    const br = await view.encoded(undefined, 'br').bytes;
    expect(Buffer.from(await promisify(gunzip)(gz)).equals(identity)).toBe(true);
    expect(Buffer.from(await promisify(brotliDecompress)(br)).equals(identity)).toBe(true);
    expect(gz[0]).toBe(0x1f); // the gzip magic
    expect(GZIP_LEVEL).toBe(6);
    expect(BROTLI_QUALITY).toBe(4);
  });

  it('compressBody compresses at the chosen levels, to under a quarter of a list', async () => {
    const input = new TextEncoder().encode(JSON.stringify(Array.from({ length: 500 }, (_, i) => pool(`p${i}`))));
    const gz = await compressBody('gzip', input);
    const br = await compressBody('br', input);
    expect(Buffer.from(gz).equals(gzipSync(input, { level: 6 }))).toBe(true);
    expect(Buffer.from(br).equals(brotliCompressSync(input, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }))).toBe(true);
    expect(Buffer.from(br).equals(brotliCompressSync(input))).toBe(false); // not the default quality 11
    for (const out of [gz, br]) expect(out.byteLength * 4).toBeLessThan(input.byteLength);
  });
});

describe('ListedView: sequenceOf', () => {
  it('reads the sequence of its own revisions up to the current one, and nothing else', () => {
    const view = new ListedView({ epoch: 12 });
    view.update(poolKey(pool('a')), pool('a'));
    view.update(poolKey(pool('b')), pool('b'));
    expect(view.revision).toBe('12-2');
    expect(view.sequenceOf('12-0')).toBe(0);
    expect(view.sequenceOf('12-2')).toBe(2);
    expect(view.sequenceOf('12-3')).toBeUndefined(); // not issued yet
    for (const other of ['1-2', '2-2', '13-2', '21-2', '112-2', '12-', '12-02', '12-2x', '12-+2', '12-1e0', ' 12-2', '12-2 ', '', 'garbage', '12-99999999999999999999']) {
      expect(view.sequenceOf(other)).toBeUndefined();
    }
  });
});
