// The registration's field rules of docs/contract.md §5, checked on the schema itself: each rule refuses
// what it should with the field and the message a PoolRelay reads, and accepts its boundary values.
import { describe, expect, it } from 'vitest';
import {
  describeIssue,
  MAX_BODY_BYTES,
  MAX_LIST_ITEMS,
  MAX_MODEL_LENGTH,
  MAX_NAME_LENGTH,
  registrationSchema,
} from '../../src/contract/index.js';
import { REGISTRATION, registration } from '../support/registration.js';

/** The contract's error for a body: code, field and message of its first issue. */
function refusal(body: unknown) {
  const result = registrationSchema.safeParse(body);
  expect(result.success, `accepted ${JSON.stringify(body)?.slice(0, 200)}`).toBe(false);
  return describeIssue(result.error!.issues);
}

function accepts(body: unknown) {
  const result = registrationSchema.safeParse(body);
  expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
  return result.data!;
}

const label = (n: number, c = 'a') => c.repeat(n);

describe('registration: the limits of docs/contract.md §5', () => {
  it('are the documented numbers', () => {
    expect(MAX_NAME_LENGTH).toBe(253);
    expect(MAX_MODEL_LENGTH).toBe(512);
    expect(MAX_LIST_ITEMS).toBe(64);
    expect(MAX_BODY_BYTES).toBe(65_536);
  });
});

describe('registration: cluster_id, namespace and name', () => {
  it.each(['cluster_id', 'namespace', 'name'])('%s: surrounding whitespace is refused as such', (field) => {
    for (const value of [' llm', 'llm ', '\tllm', 'llm\n']) {
      expect(refusal(registration({ [field]: value }))).toEqual({
        code: 'invalid_field',
        field,
        message: `${field}: must not have surrounding whitespace`,
      });
    }
  });

  it('an empty name is refused as empty', () => {
    expect(refusal(registration({ name: '' }))).toEqual({ code: 'invalid_field', field: 'name', message: 'name: must not be empty' });
  });

  it('253 characters are accepted, 254 refused with the limit in the message', () => {
    // Four labels of 63 and a dot each: 4 × 63 + 3 = 255; take labels 63 + 63 + 63 + 61 = 253 with dots.
    const at253 = [label(63), label(63), label(63), label(61)].join('.');
    expect(at253).toHaveLength(253);
    expect(accepts(registration({ namespace: at253 })).namespace).toBe(at253);
    const at254 = [label(63), label(63), label(63), label(62)].join('.');
    expect(refusal(registration({ namespace: at254 }))).toEqual({
      code: 'invalid_field',
      field: 'namespace',
      message: 'namespace: must be at most 253 characters',
    });
  });

  it('DNS-1123 labels and subdomains are accepted: one character, digits first, inner dashes, dots', () => {
    for (const value of ['a', '7', 'us-east-1', '0abc', 'a-b-c', 'a.b', 'pool.example.com', `${label(63)}.b`]) {
      expect(accepts(registration({ cluster_id: value })).cluster_id).toBe(value);
    }
  });

  it('anything else is refused with the DNS-1123 rule', () => {
    for (const value of ['-a', 'a-', 'A', 'a_b', 'a..b', '.a', 'a.', `${label(64)}`, 'a.-b', 'a b']) {
      expect(refusal(registration({ cluster_id: value }))).toEqual({
        code: 'invalid_field',
        field: 'cluster_id',
        message:
          'cluster_id: must be a DNS-1123 label or subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)',
      });
    }
  });
});

describe('registration: model', () => {
  it('1 and 512 characters are accepted; 0 and 513 refused with the range', () => {
    expect(accepts(registration({ model: 'm' })).model).toBe('m');
    expect(accepts(registration({ model: 'm'.repeat(512) })).model).toHaveLength(512);
    for (const model of ['', 'm'.repeat(513)]) {
      expect(refusal(registration({ model }))).toEqual({ code: 'invalid_field', field: 'model', message: 'model: must be 1 to 512 characters' });
    }
  });
});

describe('registration: lists', () => {
  const many = <T>(n: number, item: (i: number) => T) => Array.from({ length: n }, (_, i) => item(i));

  it.each([
    ['capabilities', (i: number) => `c${i}`],
    ['capacity', (i: number) => ({ name: `n${i}`, value: i })],
    ['frontends', (i: number) => `http://10.0.0.${i}:8000`],
  ] as const)('%s: 64 items are accepted, 65 refused with the limit', (field, item) => {
    expect(accepts(registration({ [field]: many<unknown>(64, item) }))[field]).toHaveLength(64);
    expect(refusal(registration({ [field]: many<unknown>(65, item) }))).toEqual({
      code: 'invalid_field',
      field,
      message: `${field}: must have at most 64 items`,
    });
  });

  it('default to empty lists and an empty location when left out', () => {
    const parsed = accepts(registration({ capabilities: undefined, capacity: undefined, frontends: undefined, location: undefined, relay: undefined }));
    expect(parsed).toEqual({ ...REGISTRATION, capabilities: [], capacity: [], frontends: [], location: {}, relay: undefined });
    expect('relay' in parsed).toBe(false);
  });

  it('capabilities: an empty string is refused, 512 characters accepted, 513 refused', () => {
    expect(refusal(registration({ capabilities: ['chat', ''] }))).toEqual({
      code: 'invalid_field',
      field: 'capabilities.1',
      message: 'capabilities.1: must not be empty',
    });
    expect(accepts(registration({ capabilities: ['c'.repeat(512)] })).capabilities).toEqual(['c'.repeat(512)]);
    expect(refusal(registration({ capabilities: ['c'.repeat(513)] })).field).toBe('capabilities.0');
  });

  it('capacity: a name of 1 to 512 characters and a finite value', () => {
    expect(accepts(registration({ capacity: [{ name: 'g', value: -1.5 }] })).capacity).toEqual([{ name: 'g', value: -1.5 }]);
    expect(accepts(registration({ capacity: [{ name: 'g'.repeat(512), value: 0 }] })).capacity).toHaveLength(1);
    expect(refusal(registration({ capacity: [{ name: '', value: 1 }] }))).toEqual({
      code: 'invalid_field',
      field: 'capacity.0.name',
      message: 'capacity.0.name: must not be empty',
    });
    expect(refusal(registration({ capacity: [{ name: 'g'.repeat(513), value: 1 }] })).field).toBe('capacity.0.name');
    for (const value of [Infinity, -Infinity, NaN]) {
      expect(refusal(registration({ capacity: [{ name: 'g', value }] })).field).toBe('capacity.0.value');
    }
  });

  it('location: region and zone of at most 253 characters', () => {
    const at253 = 'r'.repeat(253);
    expect(accepts(registration({ location: { region: at253, zone: at253 } })).location).toEqual({ region: at253, zone: at253 });
    expect(accepts(registration({ location: {} })).location).toEqual({});
    expect(refusal(registration({ location: { region: 'r'.repeat(254) } })).field).toBe('location.region');
    expect(refusal(registration({ location: { zone: 'z'.repeat(254) } })).field).toBe('location.zone');
  });
});

describe('registration: frontends and relay', () => {
  it('http and https URLs with a host are accepted', () => {
    const frontends = ['http://10.0.0.7:8000', 'https://pool.example.com', 'http://[fd00::1]:8000/v1'];
    const parsed = accepts(registration({ frontends, relay: 'https://relay.example.com:9000' }));
    expect(parsed.frontends).toEqual(frontends);
    expect(parsed.relay).toBe('https://relay.example.com:9000');
  });

  it('a URL with surrounding whitespace is refused, though the URL parser would trim it', () => {
    for (const url of [' http://10.0.0.7:8000', 'http://10.0.0.7:8000 ', 'http://10.0.0.7:8000\n']) {
      expect(refusal(registration({ frontends: [url] }))).toEqual({
        code: 'invalid_field',
        field: 'frontends.0',
        message: 'frontends.0: must be an http:// or https:// URL with a host',
      });
      expect(refusal(registration({ relay: url })).field).toBe('relay');
    }
  });

  it('another scheme, no host, or no URL at all is refused', () => {
    for (const url of ['ftp://10.0.0.7', 'file:///etc/passwd', 'mailto:a@b', '10.0.0.7:8000', 'relay-1', 'http://', '']) {
      expect(refusal(registration({ relay: url }))).toEqual({
        code: 'invalid_field',
        field: 'relay',
        message: 'relay: must be an http:// or https:// URL with a host',
      });
    }
  });
});

describe('registration: unknown keys', () => {
  it('are refused at every depth, naming the key', () => {
    expect(refusal(registration({ colour: 'blue' }))).toEqual({ code: 'unknown_field', field: 'colour', message: 'colour: unknown field' });
    expect(refusal(registration({ location: { floor: '3' } }))).toEqual({
      code: 'unknown_field',
      field: 'location.floor',
      message: 'location.floor: unknown field',
    });
    expect(refusal(registration({ capacity: [{ name: 'g', value: 1, unit: 'x' }] })).field).toBe('capacity.0.unit');
  });
});
