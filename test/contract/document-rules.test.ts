// The contract's schemas as the OpenAPI document carries them (docs/contract.md §11): zod's own JSON
// Schema output of each rule the service enforces, so a generator or a validating gateway refuses what the
// service refuses; and the URL rule's edges, where the pattern and the URL parser meet.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorBodySchema, registrationSchema, streamEndSchemas } from '../../src/contract/index.js';
import { registration } from '../support/registration.js';

type Json = { properties: Record<string, any>; required?: string[] };
const input = z.toJSONSchema(registrationSchema, { io: 'input' }) as unknown as Json;

describe('the registration as JSON Schema', () => {
  it('names and URLs by pattern and format, numbers finite by bounds, lists and strings by counts and lengths', () => {
    for (const field of ['cluster_id', 'namespace', 'name']) {
      const rule = input.properties[field];
      expect(rule).toMatchObject({ type: 'string', minLength: 1, maxLength: 253 });
      const pattern = new RegExp(rule.pattern);
      for (const good of ['llm', 'us-east-1', 'a.b-c.d']) expect(pattern.test(good), good).toBe(true);
      for (const bad of ['Llama', 'a/b', ' x', 'x ', '-a', 'a-', 'a..b', '']) expect(pattern.test(bad), bad).toBe(false);
    }
    for (const url of [input.properties.relay, input.properties.frontends.items]) {
      expect(url.format).toBe('uri');
      const pattern = new RegExp(url.pattern);
      for (const good of ['http://10.0.0.7:8000', 'HTTPS://h', 'http://[fd00::1]:8000/v1', 'http://u@h/p?q#f']) expect(pattern.test(good), good).toBe(true);
      for (const bad of ['ftp://h', 'http://', 'http://:80', 'http://a b', ' http://h', 'h:80', 'http:/h']) expect(pattern.test(bad), bad).toBe(false);
    }
    expect(input.properties.capacity.items.properties.value).toEqual({ type: 'number', minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE });
    expect(input.properties.model).toMatchObject({ minLength: 1, maxLength: 512 });
    for (const list of ['capabilities', 'capacity', 'frontends']) expect(input.properties[list].maxItems).toBe(64);
    expect(input.required).toEqual(['cluster_id', 'namespace', 'name', 'model']);
  });

  it('the URL rule: the pattern, then the URL parser for what a pattern cannot tell', () => {
    const accepts = (relay: string) => registrationSchema.safeParse(registration({ relay })).success;
    for (const good of ['HTTP://h:1', 'http://u@h/p?q#f', 'https://h?q', 'http://[::1]:80']) expect(accepts(good), good).toBe(true);
    // Matches the pattern, refused by the parser.
    for (const bad of ['http://a%zz', 'http://256.256.256.256', 'http://h:99999']) expect(accepts(bad), bad).toBe(false);
    // Refused by the pattern: whitespace inside, no host.
    for (const bad of ['http://a/b c', 'http://:80', 'http://@/']) expect(accepts(bad), bad).toBe(false);
  });
});

describe('the error body and the end of a stream as JSON Schema', () => {
  it('every code the service answers with, and the field named', () => {
    const codes = [
      'invalid_json', 'invalid_field', 'unknown_field', 'unauthorized', 'insufficient_scope', 'forbidden', 'payload_too_large',
      'unsupported_media_type', 'store_unavailable', 'not_found', 'not_ready', 'too_many_watchers', 'bad_request', 'request_timeout',
      'uri_too_long', 'expectation_failed', 'headers_too_large', 'source_down', 'method_not_allowed', 'internal',
    ];
    for (const code of codes) expect(errorBodySchema.safeParse({ error: { code, message: 'm' } }).success, code).toBe(true);
    expect(errorBodySchema.safeParse({ error: { code: 'no_such_code', message: 'm' } }).success).toBe(false);
    const schema = z.toJSONSchema(errorBodySchema) as unknown as Json;
    expect(schema.properties.error.properties.code.enum).toEqual(codes);
    expect(schema.properties.error.properties.field.description).toMatch(/dotted path/);
  });

  it('overloaded carries the error body, closing its reason', () => {
    expect(streamEndSchemas.overloaded).toBe(errorBodySchema);
    expect(streamEndSchemas.closing.parse({ reason: 'the replica is shutting down' })).toEqual({ reason: 'the replica is shutting down' });
    expect(streamEndSchemas.closing.safeParse({}).success).toBe(false);
    expect((z.toJSONSchema(streamEndSchemas.closing) as unknown as Json).properties.reason.description).toMatch(/why the stream ends/);
  });
});
