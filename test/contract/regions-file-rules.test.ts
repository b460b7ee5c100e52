// The regions file's shape (docs/contract.md §7) and how its first problem is named: the field as a
// dotted path and the broken rule, on one line. Reading the file and the redis_url check are src/cli's.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REDIS_PREFIX,
  describeRegionsIssue,
  MAX_TIMER_MS,
  redisPrefixProblem,
  regionNameSchema,
  regionsFileSchema,
} from '../../src/contract/index.js';

const LABEL_RULE =
  'must be a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit';
const TIMEOUT_RULE = 'must be a positive integer up to 2147483647';

/** The first problem of a regions file as `field: rule`, or `rule` for the whole file. */
function problem(document: unknown): string {
  const result = regionsFileSchema.safeParse(document);
  expect(result.success, `accepted ${JSON.stringify(document)}`).toBe(false);
  const { field, rule } = describeRegionsIssue(result.error!.issues);
  return field === undefined ? rule : `${field}: ${rule}`;
}

const region = (fields: Record<string, unknown>) => ({ regions: { 'eu-west-1': fields } });

describe('regions file: accepted', () => {
  it('fills in the default prefix and leaves the command timeout to the command line', () => {
    const parsed = regionsFileSchema.parse({
      regions: { 'us-east-1': { redis_url: 'redis://a' }, 'eu-west-1': { redis_url: 'redis://b', prefix: 'p', command_timeout_ms: 1 } },
    });
    expect(parsed.regions['us-east-1']).toEqual({ redis_url: 'redis://a', prefix: DEFAULT_REDIS_PREFIX });
    expect(parsed.regions['eu-west-1']).toEqual({ redis_url: 'redis://b', prefix: 'p', command_timeout_ms: 1 });
    expect(DEFAULT_REDIS_PREFIX).toBe('poolscope');
  });

  it('two regions may share a Redis under different prefixes, or a prefix on different Redis', () => {
    const parsed = regionsFileSchema.parse({
      regions: { a: { redis_url: 'redis://h', prefix: 'a' }, b: { redis_url: 'redis://h', prefix: 'b' }, c: { redis_url: 'redis://k', prefix: 'a' } },
    });
    expect(Object.keys(parsed.regions)).toEqual(['a', 'b', 'c']);
  });

  it('takes a command timeout up to the largest timer delay', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    expect(regionsFileSchema.parse(region({ redis_url: 'redis://h', command_timeout_ms: MAX_TIMER_MS })).regions['eu-west-1']?.command_timeout_ms).toBe(MAX_TIMER_MS);
  });
});

describe('regions file: the first problem, as field and rule', () => {
  it.each<[string, unknown, string]>([
    ['not a mapping', ['a'], 'must be a mapping with the key regions'],
    ['no regions key', {}, 'regions: is required'],
    ['an unknown top-level key', { regions: { a: { redis_url: 'redis://h' } }, region: 'a' }, 'region: unknown key (allowed: regions)'],
    ['no region', { regions: {} }, 'regions: must name at least one region'],
    ['regions as a list', { regions: ['a'] }, 'regions: must be a mapping of region names to regions'],
    ['a region name in capitals', { regions: { 'US-East-1': { redis_url: 'redis://h' } } }, `regions.US-East-1: is not a region name: ${LABEL_RULE}`],
    ['a region name with a dot', { regions: { 'us.east': { redis_url: 'redis://h' } } }, `regions["us.east"]: is not a region name: ${LABEL_RULE}`],
    ['a region that is not a mapping', { regions: { 'us-east-1': 'redis://h' } }, 'regions.us-east-1: must be a mapping with redis_url and optionally prefix, command_timeout_ms'],
    ['an unknown key in a region', region({ redis_url: 'redis://h', url: 'x' }), 'regions.eu-west-1.url: unknown key (allowed: redis_url, prefix, command_timeout_ms)'],
    ['no redis_url', region({ prefix: 'p' }), 'regions.eu-west-1.redis_url: is required'],
    ['a redis_url that is a number', region({ redis_url: 6379 }), 'regions.eu-west-1.redis_url: must be a string'],
    ['an empty redis_url', region({ redis_url: '' }), 'regions.eu-west-1.redis_url: must not be empty'],
    ['a redis_url with whitespace', region({ redis_url: 'redis://h 1' }), 'regions.eu-west-1.redis_url: must not contain whitespace'],
    ['a prefix with a brace', region({ redis_url: 'redis://h', prefix: 'a}' }), "regions.eu-west-1.prefix: must not contain '{', '}' or whitespace (it becomes a Redis hash tag)"],
    ['an empty prefix', region({ redis_url: 'redis://h', prefix: '' }), 'regions.eu-west-1.prefix: must not be empty'],
    ['a prefix that is a number', region({ redis_url: 'redis://h', prefix: 7 }), 'regions.eu-west-1.prefix: must be a string'],
    ['a command timeout of 0', region({ redis_url: 'redis://h', command_timeout_ms: 0 }), `regions.eu-west-1.command_timeout_ms: ${TIMEOUT_RULE}`],
    ['a decimal command timeout', region({ redis_url: 'redis://h', command_timeout_ms: 1.5 }), `regions.eu-west-1.command_timeout_ms: ${TIMEOUT_RULE}`],
    ['a command timeout beyond a timer', region({ redis_url: 'redis://h', command_timeout_ms: MAX_TIMER_MS + 1 }), `regions.eu-west-1.command_timeout_ms: ${TIMEOUT_RULE}`],
    [
      'two regions on one store',
      { regions: { b: { redis_url: 'redis://h' }, a: { redis_url: 'redis://h', prefix: 'poolscope' }, c: { redis_url: 'redis://h' } } },
      'regions.b: has the same redis_url and prefix as region a: each region needs its own store',
    ],
  ])('%s', (_what, document, expected) => {
    expect(problem(document)).toBe(expected);
  });

  it('names no field and a generic rule when there is no issue', () => {
    expect(describeRegionsIssue([])).toEqual({ field: undefined, rule: 'is invalid' });
  });

  it('quotes a numeric path part in brackets', () => {
    const issue = { code: 'custom', path: ['regions', 0, 'x'], message: 'm', input: undefined } as const;
    expect(describeRegionsIssue([issue as never])).toEqual({ field: 'regions[0].x', rule: 'm' });
  });
});

describe('region names and Redis prefixes', () => {
  it('a region name is a DNS-1123 label of at most 63 characters', () => {
    for (const name of ['a', '1', 'eu-west-1', 'a'.repeat(63)]) expect(regionNameSchema.safeParse(name).success).toBe(true);
    for (const name of ['', '-a', 'a-', 'A', 'a.b', 'a_b', 'a'.repeat(64), ' a']) expect(regionNameSchema.safeParse(name).success).toBe(false);
  });

  it('a Redis prefix is any non-empty text without braces or whitespace', () => {
    expect(redisPrefixProblem('poolscope')).toBeUndefined();
    expect(redisPrefixProblem('a:b.c-d_e')).toBeUndefined();
    expect(redisPrefixProblem('')).toBe('must not be empty');
    for (const prefix of ['{a', 'a}', 'a b', 'a\tb', 'a\n']) {
      expect(redisPrefixProblem(prefix)).toBe("must not contain '{', '}' or whitespace (it becomes a Redis hash tag)");
    }
  });
});
