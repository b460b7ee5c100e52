// The flags and the regions file of docs/contract.md §7 (`--region`, `--regions-file`,
// `--region-hold-secs`), accepted and refused, through parseServeFlags; one bad file through the binary.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SERVE_FLAGS } from '../../src/cli/flag-table.js';
import { parseServeFlags } from '../../src/cli/flags.js';
import { serveCommand } from '../../src/cli/commands/serve.js';
import { commandHelpText } from '../../src/cli/help.js';
import { DEFAULT_CONFIG, type ServeConfig } from '../../src/service/config.js';
import { runPoolscope } from '../support/process.js';

// Real files, created at collection time so the tables can name them.
const dir = mkdtempSync(join(tmpdir(), 'poolscope-regions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** Writes `text` to a new file of the temp dir and returns its path. */
function file(text: string, extension = 'yaml'): string {
  const path = join(dir, `regions-${++files}.${extension}`);
  writeFileSync(path, text);
  return path;
}

const YAML_FILE = file(`# one ConfigMap, the same in every region
regions:
  us-east-1: { redis_url: "redis+sentinel://s1:26379,s2:26379/poolscope" }
  eu-west-1: { redis_url: "redis://eu-redis.example:6379", prefix: poolscope }
`);
const JSON_FILE = file(
  JSON.stringify(
    {
      regions: {
        'us-east-1': { redis_url: 'rediss://us-redis.example:6380/2', prefix: 'team-a:pools', command_timeout_ms: 250 },
        'ap-south-1': { redis_url: 'redis+cluster://c1:7000,c2:7001' },
      },
    },
    null,
    '\t',
  ),
  'json',
);
const missing = join(dir, 'missing.yaml');
const aDirectory = join(dir, 'a-directory');
mkdirSync(aDirectory);

/** The two regions of YAML_FILE as ServeConfig has them: sorted, defaults filled in. */
const YAML_REGIONS: ServeConfig['regions'] = [
  { name: 'eu-west-1', redisUrl: 'redis://eu-redis.example:6379', prefix: 'poolscope', commandTimeoutMs: 1000 },
  { name: 'us-east-1', redisUrl: 'redis+sentinel://s1:26379,s2:26379/poolscope', prefix: 'poolscope', commandTimeoutMs: 1000 },
];
const REGIONS = ['--region', 'us-east-1', '--regions-file', YAML_FILE];
/** What REGIONS adds to the defaults. */
const REGIONS_CONFIG: Partial<ServeConfig> = {
  registrationStorage: 'redis',
  region: 'us-east-1',
  regions: YAML_REGIONS,
  regionHoldMs: 60_000,
};

type Env = Record<string, string | undefined>;

function accepted(argv: string[], env: Env = {}): ServeConfig {
  const result = parseServeFlags(argv, env);
  if (!result.ok) throw new Error(`refused: ${result.flag}: ${result.message}`);
  return result.config;
}

/** The refusal line as main.ts prints it, without `poolscope: ` and the newline. */
function refusal(argv: string[], env: Env = {}): string {
  const result = parseServeFlags(argv, env);
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.config)}`);
  return `${result.flag}: ${result.message}`;
}

interface Acceptance {
  name: string;
  argv: string[];
  env?: Env;
  expected: Partial<ServeConfig>;
}

const ACCEPTED: Acceptance[] = [
  { name: 'a YAML file: regions sorted, prefix and timeout defaulted, storage redis, hold 4 leases', argv: REGIONS, expected: REGIONS_CONFIG },
  {
    name: 'a JSON file (tab-indented): prefix and command_timeout_ms from the file, else the defaults',
    argv: ['--region=ap-south-1', `--regions-file=${JSON_FILE}`],
    expected: {
      registrationStorage: 'redis',
      region: 'ap-south-1',
      regions: [
        { name: 'ap-south-1', redisUrl: 'redis+cluster://c1:7000,c2:7001', prefix: 'poolscope', commandTimeoutMs: 1000 },
        { name: 'us-east-1', redisUrl: 'rediss://us-redis.example:6380/2', prefix: 'team-a:pools', commandTimeoutMs: 250 },
      ],
      regionHoldMs: 60_000,
    },
  },
  {
    name: '--redis-command-timeout-ms is the default of each region without command_timeout_ms',
    argv: ['--region=ap-south-1', `--regions-file=${JSON_FILE}`, '--redis-command-timeout-ms', '400'],
    expected: {
      registrationStorage: 'redis',
      redisCommandTimeoutMs: 400,
      region: 'ap-south-1',
      regions: [
        { name: 'ap-south-1', redisUrl: 'redis+cluster://c1:7000,c2:7001', prefix: 'poolscope', commandTimeoutMs: 400 },
        { name: 'us-east-1', redisUrl: 'rediss://us-redis.example:6380/2', prefix: 'team-a:pools', commandTimeoutMs: 250 },
      ],
      regionHoldMs: 60_000,
    },
  },
  { name: 'an explicit --registration-storage redis', argv: [...REGIONS, '--registration-storage', 'redis'], expected: REGIONS_CONFIG },
  { name: 'the default hold is 4 × the lease', argv: [...REGIONS, '--lease-duration-secs', '2', '--heartbeat-interval-secs=0.5'], expected: { ...REGIONS_CONFIG, leaseMs: 2000, heartbeatIntervalMs: 500, regionHoldMs: 8000 } },
  { name: 'the default hold of a decimal lease', argv: [...REGIONS, '--lease-duration-secs=0.25', '--heartbeat-interval-secs=0.1'], expected: { ...REGIONS_CONFIG, leaseMs: 250, heartbeatIntervalMs: 100, regionHoldMs: 1000 } },
  { name: 'a hold in whole seconds', argv: [...REGIONS, '--region-hold-secs', '120'], expected: { ...REGIONS_CONFIG, regionHoldMs: 120_000 } },
  { name: 'a hold of a fraction of a second, for tests', argv: [...REGIONS, '--region-hold-secs=0.5'], expected: { ...REGIONS_CONFIG, regionHoldMs: 500 } },
  { name: 'a hold of 1 ms', argv: [...REGIONS, '--region-hold-secs=0.001'], expected: { ...REGIONS_CONFIG, regionHoldMs: 1 } },
  { name: 'a hold as long as a timer', argv: [...REGIONS, '--region-hold-secs=2147483.647'], expected: { ...REGIONS_CONFIG, regionHoldMs: 2_147_483_647 } },
  { name: 'regions with mcs discovery', argv: [...REGIONS, '--pool-discovery', 'mcs'], expected: { ...REGIONS_CONFIG, poolDiscovery: 'mcs' } },
  {
    name: 'every region value from env',
    argv: [],
    env: { POOLSCOPE_SERVE_REGION: 'eu-west-1', POOLSCOPE_SERVE_REGIONS_FILE: YAML_FILE, POOLSCOPE_SERVE_REGION_HOLD_SECS: '30' },
    expected: { ...REGIONS_CONFIG, region: 'eu-west-1', regionHoldMs: 30_000 },
  },
  { name: 'env and flags combine', argv: ['--region', 'us-east-1'], env: { POOLSCOPE_SERVE_REGIONS_FILE: YAML_FILE }, expected: REGIONS_CONFIG },
  { name: 'the command line wins over env', argv: REGIONS, env: { POOLSCOPE_SERVE_REGION: 'ap-south-1', POOLSCOPE_SERVE_REGIONS_FILE: missing }, expected: REGIONS_CONFIG },
];

const UNCHANGED: Acceptance[] = [
  { name: 'no flags: no region, no regions, no hold', argv: [], expected: {} },
  { name: 'redis storage without regions', argv: ['--registration-storage', 'redis', '--redis-url', 'redis://127.0.0.1:6379', '--redis-prefix', 'p'], expected: { registrationStorage: 'redis', redisUrl: 'redis://127.0.0.1:6379', redisPrefix: 'p' } },
  { name: 'a lease without regions holds nothing', argv: ['--lease-duration-secs', '20'], expected: { leaseMs: 20_000 } },
];

describe('parseServeFlags accepts regions', () => {
  it.each(ACCEPTED)('$name', ({ argv, env, expected }) => {
    expect(accepted(argv, env)).toEqual({ ...DEFAULT_CONFIG, ...expected });
  });

  it('leaves --redis-url and --redis-prefix at their defaults: the stores are in regions', () => {
    const config = accepted(REGIONS);
    expect(config.redisUrl).toBeUndefined();
    expect(config.redisPrefix).toBe(DEFAULT_CONFIG.redisPrefix);
    expect(config.regions.every((region) => region.prefix === DEFAULT_CONFIG.redisPrefix)).toBe(true);
  });

  it('reads every --redis-url form, and the same Redis under two prefixes', () => {
    const path = file(`regions:
  a: { redis_url: "redis://[::1]:6379/3" }
  b: { redis_url: "rediss+sentinel://user:p%40ss@s1,s2:26380/master/1" }
  c: { redis_url: "rediss+cluster://n1:7000" }
  d: { redis_url: "redis://[::1]:6379/3", prefix: "other" }
`);
    expect(accepted(['--region=d', `--regions-file=${path}`]).regions.map((r) => [r.name, r.prefix])).toEqual([
      ['a', 'poolscope'],
      ['b', 'poolscope'],
      ['c', 'poolscope'],
      ['d', 'other'],
    ]);
  });

  it('takes region names of 1 and 63 characters, digits first', () => {
    const long = `a${'-'.repeat(61)}b`;
    const path = file(JSON.stringify({ regions: { '1': { redis_url: 'redis://one' }, [long]: { redis_url: 'redis://two' } } }), 'json');
    expect(accepted(['--region', long, '--regions-file', path]).regions.map((r) => r.name)).toEqual(['1', long]);
  });
});

describe('without the region flags nothing changes', () => {
  it.each(UNCHANGED)('$name', ({ argv, expected }) => {
    const config = accepted(argv);
    expect(config).toEqual({ ...DEFAULT_CONFIG, ...expected });
    expect(config).toMatchObject({ region: undefined, regions: [], regionHoldMs: undefined });
  });

  it('DEFAULT_CONFIG has no regions, and a config never shares its regions array', () => {
    expect(DEFAULT_CONFIG).toMatchObject({ region: undefined, regions: [], regionHoldMs: undefined });
    expect(accepted([]).regions).not.toBe(DEFAULT_CONFIG.regions);
  });
});

interface Refused {
  name: string;
  argv: string[];
  env?: Env;
  /** The whole line after `poolscope: `. */
  line: string;
}

const LABEL_RULE = 'must be a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit';

const FLAG_REFUSALS: Refused[] = [
  // both or neither
  { name: '--region without --regions-file', argv: ['--region', 'us-east-1'], line: '--regions-file: required with --region' },
  { name: '--regions-file without --region', argv: ['--regions-file', YAML_FILE], line: '--region: required with --regions-file' },
  { name: '--region from env without a file', argv: [], env: { POOLSCOPE_SERVE_REGION: 'us-east-1' }, line: '--regions-file: required with --region (from POOLSCOPE_SERVE_REGION)' },
  { name: 'a regions file from env without a region', argv: [], env: { POOLSCOPE_SERVE_REGIONS_FILE: YAML_FILE }, line: '--region: required with --regions-file (from POOLSCOPE_SERVE_REGIONS_FILE)' },
  // the region must be in the file, a DNS-1123 label
  { name: 'a region not in the file', argv: ['--region', 'ap-south-1', '--regions-file', YAML_FILE], line: '--region: must be a region of --regions-file: eu-west-1, us-east-1 (got "ap-south-1")' },
  { name: 'a region from env not in the file', argv: ['--regions-file', YAML_FILE], env: { POOLSCOPE_SERVE_REGION: 'ap-south-1' }, line: '--region: must be a region of --regions-file: eu-west-1, us-east-1 (got "ap-south-1") (from POOLSCOPE_SERVE_REGION)' },
  { name: 'a region in capitals', argv: ['--region', 'US-EAST-1', '--regions-file', YAML_FILE], line: `--region: ${LABEL_RULE} (got "US-EAST-1")` },
  { name: 'a region with _', argv: ['--region=us_east_1'], line: `--region: ${LABEL_RULE} (got "us_east_1")` },
  { name: 'a region with a dot', argv: ['--region=us.east'], line: `--region: ${LABEL_RULE} (got "us.east")` },
  { name: 'a region starting with -', argv: ['--region=-east'], line: `--region: ${LABEL_RULE} (got "-east")` },
  { name: 'a region ending with -', argv: ['--region=east-'], line: `--region: ${LABEL_RULE} (got "east-")` },
  { name: 'a region of 64 characters', argv: [`--region=${'a'.repeat(64)}`], line: `--region: ${LABEL_RULE} (got "${'a'.repeat(64)}")` },
  { name: 'an empty region', argv: ['--region='], line: '--region: must not be empty' },
  { name: 'an empty regions file', argv: ['--regions-file='], line: '--regions-file: must not be empty' },
  // storage is redis, and the file holds the Redis settings
  { name: 'an explicit memory storage', argv: [...REGIONS, '--registration-storage', 'memory'], line: '--registration-storage: must be redis with --region and --regions-file (got "memory")' },
  { name: 'memory storage from env', argv: REGIONS, env: { POOLSCOPE_SERVE_REGISTRATION_STORAGE: 'memory' }, line: '--registration-storage: must be redis with --region and --regions-file (got "memory") (from POOLSCOPE_SERVE_REGISTRATION_STORAGE)' },
  { name: '--redis-url with regions', argv: [...REGIONS, '--redis-url', 'redis://127.0.0.1:6379'], line: "--redis-url: not allowed with --region and --regions-file: each region's redis_url is in the regions file" },
  { name: '--redis-url with regions and redis storage', argv: [...REGIONS, '--registration-storage=redis', '--redis-url', 'redis://127.0.0.1:6379'], line: "--redis-url: not allowed with --region and --regions-file: each region's redis_url is in the regions file" },
  { name: '--redis-prefix with regions', argv: [...REGIONS, '--redis-prefix', 'team-a'], line: "--redis-prefix: not allowed with --region and --regions-file: each region's prefix is in the regions file" },
  { name: '--redis-prefix with regions, even at its default', argv: [...REGIONS, '--redis-prefix', 'poolscope'], line: "--redis-prefix: not allowed with --region and --regions-file: each region's prefix is in the regions file" },
  { name: 'a redis URL from env with regions', argv: REGIONS, env: { POOLSCOPE_SERVE_REDIS_URL: 'redis://127.0.0.1' }, line: "--redis-url: not allowed with --region and --regions-file: each region's redis_url is in the regions file (from POOLSCOPE_SERVE_REDIS_URL)" },
  // --region-hold-secs
  { name: 'a hold without regions', argv: ['--region-hold-secs', '60'], line: '--region-hold-secs: only applies with --region and --regions-file (no regions configured)' },
  { name: 'a hold with redis storage but no regions', argv: ['--registration-storage=redis', '--redis-url=redis://h', '--region-hold-secs=60'], line: '--region-hold-secs: only applies with --region and --regions-file (no regions configured)' },
  { name: 'a hold from env without regions', argv: [], env: { POOLSCOPE_SERVE_REGION_HOLD_SECS: '60' }, line: '--region-hold-secs: only applies with --region and --regions-file (no regions configured) (from POOLSCOPE_SERVE_REGION_HOLD_SECS)' },
  { name: 'a hold of 0', argv: [...REGIONS, '--region-hold-secs', '0'], line: '--region-hold-secs: must be greater than 0' },
  { name: 'a hold of 0.000', argv: [...REGIONS, '--region-hold-secs=0.000'], line: '--region-hold-secs: must be greater than 0' },
  { name: 'a negative hold', argv: [...REGIONS, '--region-hold-secs=-1'], line: '--region-hold-secs: must be a number of seconds with at most 3 decimals, e.g. 15 or 0.5 (got "-1")' },
  { name: 'a hold with a unit', argv: [...REGIONS, '--region-hold-secs', '60s'], line: '--region-hold-secs: must be a number of seconds with at most 3 decimals, e.g. 15 or 0.5 (got "60s")' },
  { name: 'a hold with 4 decimals', argv: [...REGIONS, '--region-hold-secs', '0.0005'], line: '--region-hold-secs: must be a number of seconds with at most 3 decimals, e.g. 15 or 0.5 (got "0.0005")' },
  { name: 'a hold longer than a timer', argv: [...REGIONS, '--region-hold-secs', '2147483.648'], line: '--region-hold-secs: must be at most 2147483.647' },
  { name: 'a bad hold from env', argv: REGIONS, env: { POOLSCOPE_SERVE_REGION_HOLD_SECS: '0' }, line: '--region-hold-secs: must be greater than 0 (from POOLSCOPE_SERVE_REGION_HOLD_SECS)' },
  { name: 'a hold given twice', argv: [...REGIONS, '--region-hold-secs=1', '--region-hold-secs=2'], line: '--region-hold-secs: given more than once' },
];

/** A bad regions file (YAML unless named .json) and the rest of its refusal line after `--regions-file: "<path>": `. */
const BAD_FILES: { name: string; text: string; extension?: string; rest: string }[] = [
  // not YAML
  { name: 'not YAML', text: 'regions: [1', rest: 'not YAML or JSON: Flow sequence in block collection must be sufficiently indented and end with a ] at line 1, column 12' },
  { name: 'broken JSON', text: '{"regions": {"a": {"redis_url": "redis://h"}}', extension: 'json', rest: 'not YAML or JSON: Flow map must end with a } at line 1, column 46' },
  { name: 'a duplicate key', text: 'regions:\n  a: { redis_url: "redis://h1" }\n  a: { redis_url: "redis://h2" }\n', rest: 'not YAML or JSON: Map keys must be unique at line 3, column 3' },
  { name: 'two YAML documents', text: 'regions: {}\n---\nregions: {}\n', rest: 'not YAML or JSON: Source contains multiple documents; please use YAML.parseAllDocuments() at line 2, column 1' },
  // the file as a whole
  { name: 'an empty file', text: '', rest: 'must be a mapping with the key regions' },
  { name: 'a list', text: '- a\n- b\n', rest: 'must be a mapping with the key regions' },
  { name: 'no regions key', text: '{}', extension: 'json', rest: 'regions: is required' },
  { name: 'an unknown top-level key', text: 'regions: { a: { redis_url: "redis://h" } }\nregion: a\n', rest: 'region: unknown key (allowed: regions)' },
  // regions
  { name: 'no region', text: 'regions: {}\n', rest: 'regions: must name at least one region' },
  { name: 'regions as a list', text: 'regions:\n  - us-east-1\n', rest: 'regions: must be a mapping of region names to regions' },
  { name: 'regions null', text: 'regions:\n', rest: 'regions: must be a mapping of region names to regions' },
  { name: 'a region name in capitals', text: 'regions:\n  US-East-1: { redis_url: "redis://h" }\n', rest: `regions.US-East-1: is not a region name: ${LABEL_RULE}` },
  { name: 'a region name with _', text: 'regions:\n  us_east: { redis_url: "redis://h" }\n', rest: `regions.us_east: is not a region name: ${LABEL_RULE}` },
  { name: 'a region name with a dot', text: 'regions:\n  "us.east": { redis_url: "redis://h" }\n', rest: `regions["us.east"]: is not a region name: ${LABEL_RULE}` },
  { name: 'a region null', text: 'regions:\n  us-east-1:\n', rest: 'regions.us-east-1: must be a mapping with redis_url and optionally prefix, command_timeout_ms' },
  { name: 'a region as a string', text: 'regions:\n  us-east-1: redis://h\n', rest: 'regions.us-east-1: must be a mapping with redis_url and optionally prefix, command_timeout_ms' },
  { name: 'an unknown key in a region', text: 'regions:\n  us-east-1: { redis_url: "redis://h", url: "redis://h" }\n', rest: 'regions.us-east-1.url: unknown key (allowed: redis_url, prefix, command_timeout_ms)' },
  {
    name: 'two regions on one store',
    text: 'regions:\n  b: { redis_url: "redis://h" }\n  a: { redis_url: "redis://h", prefix: poolscope }\n',
    rest: 'regions.b: has the same redis_url and prefix as region a: each region needs its own store',
  },
  // redis_url
  { name: 'no redis_url', text: 'regions:\n  eu-west-1: { prefix: p }\n', rest: 'regions.eu-west-1.redis_url: is required' },
  { name: 'an empty redis_url', text: 'regions:\n  eu-west-1: { redis_url: "" }\n', rest: 'regions.eu-west-1.redis_url: must not be empty' },
  { name: 'a redis_url that is a number', text: 'regions:\n  eu-west-1: { redis_url: 6379 }\n', rest: 'regions.eu-west-1.redis_url: must be a string' },
  { name: 'a redis_url with whitespace', text: 'regions:\n  eu-west-1: { redis_url: "redis://h 1" }\n', rest: 'regions.eu-west-1.redis_url: must not contain whitespace' },
  { name: 'a redis_url of another scheme', text: 'regions:\n  eu-west-1: { redis_url: "http://h:6379" }\n', rest: 'regions.eu-west-1.redis_url: redis url http://h:6379: unknown scheme "http" (use redis, rediss, redis+sentinel, rediss+sentinel, redis+cluster, rediss+cluster)' },
  { name: 'a redis_url with a query', text: 'regions:\n  eu-west-1: { redis_url: "redis://h:6379?db=1" }\n', rest: 'regions.eu-west-1.redis_url: redis url redis://h:6379?db=1: query strings and fragments are not supported' },
  { name: 'a redis_url with port 0', text: 'regions:\n  eu-west-1: { redis_url: "redis://h:0" }\n', rest: 'regions.eu-west-1.redis_url: redis url redis://h:0: port 0 is not 1-65535' },
  { name: 'a sentinel redis_url without a master', text: 'regions:\n  eu-west-1: { redis_url: "redis+sentinel://s1,s2" }\n', rest: 'regions.eu-west-1.redis_url: redis url redis+sentinel://s1,s2: path must be /<masterName>[/<db>]' },
  { name: 'a redis_url error masks the password', text: 'regions:\n  eu-west-1: { redis_url: "redis://u:secret@h:0" }\n', rest: 'regions.eu-west-1.redis_url: redis url redis://u:***@h:0: port 0 is not 1-65535' },
  // prefix
  { name: 'a prefix with {', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", prefix: "a{b" }\n', rest: "regions.eu-west-1.prefix: must not contain '{', '}' or whitespace (it becomes a Redis hash tag)" },
  { name: 'a prefix with a space', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", prefix: "a b" }\n', rest: "regions.eu-west-1.prefix: must not contain '{', '}' or whitespace (it becomes a Redis hash tag)" },
  { name: 'an empty prefix', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", prefix: "" }\n', rest: 'regions.eu-west-1.prefix: must not be empty' },
  { name: 'a prefix that is a number', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", prefix: 2024 }\n', rest: 'regions.eu-west-1.prefix: must be a string' },
  // command_timeout_ms
  { name: 'a command timeout of 0', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", command_timeout_ms: 0 }\n', rest: 'regions.eu-west-1.command_timeout_ms: must be a positive integer up to 2147483647' },
  { name: 'a decimal command timeout', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", command_timeout_ms: 1.5 }\n', rest: 'regions.eu-west-1.command_timeout_ms: must be a positive integer up to 2147483647' },
  { name: 'a command timeout as a string', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", command_timeout_ms: "500" }\n', rest: 'regions.eu-west-1.command_timeout_ms: must be a positive integer up to 2147483647' },
  { name: 'a command timeout beyond a timer', text: 'regions:\n  eu-west-1: { redis_url: "redis://h", command_timeout_ms: 2147483648 }\n', rest: 'regions.eu-west-1.command_timeout_ms: must be a positive integer up to 2147483647' },
];

describe('parseServeFlags refuses', () => {
  it.each(FLAG_REFUSALS)('$name', ({ argv, env, line }) => {
    expect(refusal(argv, env)).toBe(line);
  });

  it.each(BAD_FILES)('a regions file with $name, naming the flag, the file and the field', ({ text, extension, rest }) => {
    const path = file(text, extension);
    // The file is read whatever the region: a bad file fails before the rules between flags.
    expect(refusal(['--region', 'eu-west-1', '--regions-file', path])).toBe(`--regions-file: ${JSON.stringify(path)}: ${rest}`);
    expect(refusal([], { POOLSCOPE_SERVE_REGIONS_FILE: path })).toBe(`--regions-file: ${JSON.stringify(path)}: ${rest} (from POOLSCOPE_SERVE_REGIONS_FILE)`);
  });

  it('a missing regions file', () => {
    expect(refusal([...REGIONS.slice(0, 2), '--regions-file', missing])).toBe(`--regions-file: cannot read ${JSON.stringify(missing)} (ENOENT)`);
  });

  it('a regions file that is a directory', () => {
    expect(refusal([...REGIONS.slice(0, 2), `--regions-file=${aDirectory}`])).toBe(`--regions-file: ${JSON.stringify(aDirectory)} is not a file`);
  });

  it('a regions file larger than one ConfigMap', () => {
    const path = file(`regions: { a: { redis_url: "redis://h" } }\n${'#'.repeat(1024 * 1024)}\n`);
    expect(refusal(['--region=a', `--regions-file=${path}`])).toBe(`--regions-file: ${JSON.stringify(path)}: larger than 1 MiB (one ConfigMap)`);
  });

  it('keeps a refusal on one line whatever the file holds', () => {
    const paths = [
      file(JSON.stringify({ regions: { 'a\nb': { redis_url: 'redis://h' } } }), 'json'),
      file(JSON.stringify({ regions: { a: { redis_url: 'redis://h', 'x\r\ny': 1 } } }), 'json'),
      file(JSON.stringify({ regions: { a: { redis_url: 'redis://h\n:0' } } }), 'json'),
      file('regions:\n  a: [\n\n\n'),
    ];
    for (const path of paths) expect(refusal(['--region=a', `--regions-file=${path}`])).not.toMatch(/[\r\n]/);
    expect(refusal(['--region=a', `--regions-file=${paths[0]}`])).toBe(
      `--regions-file: ${JSON.stringify(paths[0])}: regions["a\\nb"]: is not a region name: ${LABEL_RULE}`,
    );
  });
});

describe('--help', () => {
  it('lists the three region flags, each with its summary and env name', () => {
    const help = commandHelpText(serveCommand);
    for (const [name, value, env] of [
      ['region', 'NAME', 'POOLSCOPE_SERVE_REGION'],
      ['regions-file', 'PATH', 'POOLSCOPE_SERVE_REGIONS_FILE'],
      ['region-hold-secs', 'SECS', 'POOLSCOPE_SERVE_REGION_HOLD_SECS'],
    ] as const) {
      expect(SERVE_FLAGS.some((spec) => spec.name === name)).toBe(true);
      const at = help.indexOf(`  --${name} ${value}\n`);
      expect(at).toBeGreaterThan(-1);
      // The summary, wrapped, then the default and the env name.
      const lines = help.slice(at).split('\n').slice(1);
      const last = lines.findIndex((line) => line.includes('; env '));
      expect(last).toBeGreaterThan(0);
      for (const line of lines.slice(0, last)) expect(line).toMatch(/^ {6}\S/);
      expect(lines[last]).toContain(`env ${env}`);
    }
    expect(help).toContain('default 4 x --lease-duration-secs; env POOLSCOPE_SERVE_REGION_HOLD_SECS');
  });
});

describe('the poolscope binary', () => {
  beforeAll(() => {
    const buildError = inject('buildError');
    if (buildError !== null) throw new Error(buildError);
  });

  it('refuses a bad regions file with exit 2 and one line on stderr', async () => {
    const path = file('regions:\n  eu-west-1: { redis_url: "redis://eu-redis.example:6379", prefix: "a b" }\n');
    const result = await runPoolscope(['serve', '--region', 'eu-west-1', '--regions-file', path]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `poolscope: --regions-file: ${JSON.stringify(path)}: regions.eu-west-1.prefix: must not contain '{', '}' or whitespace (it becomes a Redis hash tag)\n`,
    });
  });
});
