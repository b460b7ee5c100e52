// Pool keys (docs/contract.md §1) and the error body's `field` and message (docs/contract.md §5).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeIssue, LISTED_STATES, parsePoolKey, POOL_DISCOVERIES, POOL_STATES, poolKey } from '../../src/contract/index.js';

describe('pool keys', () => {
  it('join and split cluster_id/namespace/name', () => {
    const id = { cluster_id: 'us-east-1', namespace: 'llm', name: 'llama-70b' };
    expect(poolKey(id)).toBe('us-east-1/llm/llama-70b');
    expect(parsePoolKey('us-east-1/llm/llama-70b')).toEqual(id);
  });

  it('refuse anything but three non-empty parts, quoting the key', () => {
    for (const key of ['', 'a', 'a/b', 'a/b/c/d', '/b/c', 'a//c', 'a/b/']) {
      expect(() => parsePoolKey(key)).toThrow(`pool key must be cluster_id/namespace/name, got ${JSON.stringify(key)}`);
    }
  });
});

describe('states and modes', () => {
  it('name the contract states, of which live and frontendless are listed', () => {
    expect(POOL_STATES).toEqual(['unregistered', 'one-sided', 'live', 'frontendless', 'lapsed', 'absent']);
    expect(LISTED_STATES).toEqual(['live', 'frontendless']);
    expect(POOL_DISCOVERIES).toEqual(['registrations', 'mcs', 'karmada']);
  });
});

describe('the error body of a refused body', () => {
  const issuesOf = (schema: z.ZodType, value: unknown) => {
    const result = schema.safeParse(value);
    if (result.success) throw new Error('accepted');
    return result.error.issues;
  };

  it('an unknown key is unknown_field, its dotted path the field', () => {
    const schema = z.strictObject({ a: z.strictObject({ b: z.number() }) });
    expect(describeIssue(issuesOf(schema, { a: { b: 1, c: 2 } }))).toEqual({ code: 'unknown_field', field: 'a.c', message: 'a.c: unknown field' });
    expect(describeIssue(issuesOf(schema, { a: { b: 1 }, top: 1 }))).toEqual({ code: 'unknown_field', field: 'top', message: 'top: unknown field' });
  });

  it('a bad value is invalid_field, with array indexes in the path', () => {
    const schema = z.object({ list: z.array(z.number().max(1, 'too big')) });
    expect(describeIssue(issuesOf(schema, { list: [0, 5] }))).toEqual({ code: 'invalid_field', field: 'list.1', message: 'list.1: too big' });
  });

  it('a body of the wrong kind has no field', () => {
    const described = describeIssue(issuesOf(z.object({ a: z.number() }), 'x'));
    expect(described.code).toBe('invalid_field');
    expect(described).not.toHaveProperty('field');
    expect(described.message).toMatch(/^body: /);
  });

  it('no issue at all is still an invalid body', () => {
    expect(describeIssue([])).toEqual({ code: 'invalid_field', message: 'invalid body' });
  });
});
