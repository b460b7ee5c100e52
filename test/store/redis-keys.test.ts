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

  it('says what it refused, quoted', () => {
    expect(() => escapeKeyPart('a\ud800')).toThrow('pool key is not well-formed Unicode: "a\\ud800"');
    expect(() => unescapeKeyPart('a b')).toThrow('not an escaped key part: "a b"');
    expect(() => unescapeKeyPart('%C3')).toThrow('escaped key part is not UTF-8: "%C3"');
  });

  it('keeps a key of DNS-1123 names as it is, but for its slashes', () => {
    expect(escapeKeyPart('us-east-1/llm.a_b/llama-70b')).toBe('us-east-1%2Fllm.a_b%2Fllama-70b');
    expect(escapeKeyPart('ab')).toBe('ab');
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

  it('shares the epoch, stamp, outages and gap renewals between pools and routers; every other router key is their own', () => {
    const pools = createStoreKeys('p');
    const routers = createStoreKeys('p', 'routers');
    expect(pools).toMatchObject({ epoch: '{p}:epoch', stamp: '{p}:stamp', outages: '{p}:outages', gapRenewals: '{p}:gap-renewals' });
    expect(routers).toMatchObject({
      deadlines: '{p}:router-deadlines',
      changes: '{p}:router-changes',
      epoch: '{p}:epoch',
      stamp: '{p}:stamp',
      outages: '{p}:outages',
      gapRenewals: '{p}:gap-renewals',
    });
    expect(routers.pool('r/1')).toBe('{p}:router:r%2F1');
    expect(createStoreKeys('p', 'pools').deadlines).toBe('{p}:deadlines');
  });

  it('refuses a prefix that would move the hash tag', () => {
    expect(() => createStoreKeys('a{b')).toThrow('redis prefix must be non-empty and hold no "{" or "}", got "a{b"');
    for (const bad of ['', 'a{b', 'a}b', '{x}']) expect(() => createStoreKeys(bad)).toThrow(RangeError);
    expect(createStoreKeys('team:a/b').changes).toBe('{team:a/b}:changes');
  });
});
