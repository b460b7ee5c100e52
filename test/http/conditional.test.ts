// What a GET /pools request asks of its reply (src/http/conditional.ts): the content coding from
// Accept-Encoding with q-values (RFC 9110 §12.5.3) and whether If-None-Match holds the current tag
// (RFC 9110 §13.1.2).
import { describe, expect, it } from 'vitest';
import { negotiateEncoding, noneMatchHolds } from '../../src/http/conditional.js';

describe('negotiateEncoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['GZIP', 'gzip'],
    ['deflate', 'identity'],
    ['deflate, gzip;q=0.5', 'gzip'],
    ['gzip;q=1.0, br;q=0.9', 'gzip'],
    ['gzip;q=0.8, br;q=0.9', 'br'],
    ['gzip ; q=0.8 , br ; Q=0.9', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0.5, br;q=0.1', 'gzip'],
    ['*;q=0', 'identity'],
    ['*;q=0, gzip', 'gzip'],
    ['gzip;q=0.5, identity;q=1', 'identity'],
    ['gzip;q=0.5, identity;q=0.5', 'gzip'],
    ['gzip;q=0.5, identity;q=0.4', 'gzip'],
    ['identity;q=0', 'identity'],
    ['gzip;q=2', 'identity'],
    ['gzip;q=-1', 'identity'],
    ['gzip;q=abc', 'identity'],
    ['gzip;level=9', 'gzip'],
    [', , gzip', 'gzip'],
    // Spaces around q's equals sign are taken; a parameter that only contains or starts with q is not q.
    ['gzip;q = 0', 'identity'],
    ['gzip;xq=0', 'gzip'],
    ['gzip;qx=0', 'gzip'],
    ['identity;q=-1, gzip;q=0', 'identity'],
  ])('%s → %s', (header, coding) => {
    expect(negotiateEncoding(header)).toBe(coding);
  });
});

describe('noneMatchHolds', () => {
  const tag = '"5-3.abc+gzip"';
  it.each([
    [undefined, false],
    ['', false],
    ['*', true],
    [' * ', true],
    ['"5-3.abc+gzip"', true],
    ['W/"5-3.abc+gzip"', true],
    ['"5-3.abc"', false],
    ['"5-2.abc+gzip"', false],
    ['"x", "5-3.abc+gzip"', true],
    ['"x","5-3.abc+gzip"', true],
    ['"x" , W/"5-3.abc+gzip" ', true],
    ['"x", "y"', false],
    ['5-3.abc+gzip', false],
    ['"5-3.abc+gzip', false],
    ['"a,b", "5-3.abc+gzip"', true],
    ['junk "5-3.abc+gzip"', false],
    ['*, "x"', false],
  ])('%s → %s', (header, holds) => {
    expect(noneMatchHolds(header, tag)).toBe(holds);
  });
});
