// One spelling per registration (docs/design.md "The store"): the store compares these strings to tell
// a renewal from a change, so key order must not matter and the rest must be JSON.stringify's.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/store/canonical-json.js';

describe('canonical JSON', () => {
  it('sorts object keys at every depth, whatever order they were written in', () => {
    const a = { b: 1, a: { d: [{ y: 1, x: 2 }], c: 'x' } };
    const b = { a: { c: 'x', d: [{ x: 2, y: 1 }] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"c":"x","d":[{"x":2,"y":1}]},"b":1}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it('writes scalars, arrays and empty containers as JSON.stringify does', () => {
    for (const value of [null, true, false, 0, -1.5, 'a"b\\c\n', [], {}, [1, 'two', null, [3]], { '': 1, 'a b': 'c' }]) {
      expect(canonicalJson(value)).toBe(JSON.stringify(value));
    }
  });

  it('drops undefined members, and writes undefined array items as null', () => {
    expect(canonicalJson({ a: undefined, b: 1, c: undefined })).toBe('{"b":1}');
    expect(canonicalJson({ a: undefined })).toBe('{}');
    expect(canonicalJson([undefined, 1, undefined])).toBe('[null,1,null]');
    expect(canonicalJson({ f: () => 1, s: Symbol('s'), n: 2 })).toBe('{"n":2}');
  });

  it('a value JSON cannot hold is null', () => {
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(() => 1)).toBe('null');
  });

  it('uses toJSON where an object has one, as JSON.stringify does', () => {
    expect(canonicalJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  it('separates members and items with one comma and nothing else', () => {
    expect(canonicalJson({ c: [1, 2, 3], a: 1, b: 2 })).toBe('{"a":1,"b":2,"c":[1,2,3]}');
  });
});
