import { describe, expect, it } from 'vitest';
import { createStoreKeys, escapeKeyPart, unescapeKeyPart } from '../../src/store/redis/keys.js';

const HOSTILE = [
  'us-east-1/llm/llama-70b',
  '',
  '{poolscope}:deadlines',
  '}{',
  'a:b:c',
  '%41',
  'A',
  '%',
  '%%2',
  ' leading and trailing ',
  'tab\there',
  '\r\n*1\r\n$4\r\nPING\r\n',
  'nul\u0000byte',
  'ümlaut',
  '🚀 rocket',
  '漢字/かな',
  'e\u0301', // e + combining accent, not normalised
  'é',
  'x'.repeat(2000),
];

describe('pool key escaping', () => {
  it('keeps only [A-Za-z0-9._-] and %XX in the escaped form', () => {
    for (const key of HOSTILE) expect(escapeKeyPart(key)).toMatch(/^(?:[A-Za-z0-9._-]|%[0-9A-F]{2})*$/);
  });

  it('round-trips every key exactly', () => {
    for (const key of HOSTILE) expect(unescapeKeyPart(escapeKeyPart(key))).toBe(key);
  });

  it('maps different keys to different escaped forms', () => {
    expect(new Set(HOSTILE.map(escapeKeyPart)).size).toBe(HOSTILE.length);
  });

  it('escapes every byte of the UTF-8 encoding', () => {
    expect(escapeKeyPart('a/b c:{d}')).toBe('a%2Fb%20c%3A%7Bd%7D');
    expect(escapeKeyPart('%41')).toBe('%2541');
    expect(escapeKeyPart('ü🚀')).toBe('%C3%BC%F0%9F%9A%80');
    expect(escapeKeyPart('cluster-1.a_b')).toBe('cluster-1.a_b');
  });

  it('refuses lone surrogates, which UTF-8 cannot carry (two of them would collide)', () => {
    expect(() => escapeKeyPart('a\ud800')).toThrow(RangeError);
    expect(() => escapeKeyPart('\udc00b')).toThrow(RangeError);
    expect(escapeKeyPart('\ud83d\ude80')).toBe('%F0%9F%9A%80');
  });

  it('refuses malformed escaped text', () => {
    for (const bad of ['%', '%4', '%zz', 'a b', '{x}', '%C3']) expect(() => unescapeKeyPart(bad)).toThrow(RangeError);
  });
});

describe('store keys', () => {
  it('puts every key under one hash tag', () => {
    const keys = createStoreKeys('poolscope');
    expect(keys.deadlines).toBe('{poolscope}:deadlines');
    expect(keys.changes).toBe('{poolscope}:changes');
    expect(keys.pool('c/ns/n')).toBe('{poolscope}:pool:c%2Fns%2Fn');
    // A pool cannot be named into the deadlines or changes key.
    expect(keys.pool('deadlines')).not.toBe(keys.deadlines);
    expect(keys.pool('}:x')).toBe('{poolscope}:pool:%7D%3Ax');
  });

  it('refuses a prefix that would move the hash tag', () => {
    for (const bad of ['', 'a{b', 'a}b', '{x}']) expect(() => createStoreKeys(bad)).toThrow(RangeError);
    expect(createStoreKeys('team:a/b').changes).toBe('{team:a/b}:changes');
  });
});
