// Every rule of docs/contract.md §6 for `poolscope serve` flags, accepted and refused, through parseServeFlags.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type ServeConfig } from '../../src/service/config.js';
import { envName } from '../../src/cli/env-names.js';
import { SERVE_FLAGS } from '../../src/cli/flag-table.js';
import { parseServeFlags } from '../../src/cli/flags.js';
import { makeCertificates } from '../tls/certificates.js';

// Real files for the readable-path checks; created at collection time so the tables can name them.
const dir = mkdtempSync(join(tmpdir(), 'poolscope-flags-'));
const certificates = makeCertificates();
const cert = certificates.server.cert;
const key = certificates.server.key;
const tokens = join(dir, 'tokens');
const missing = join(dir, 'missing');
const aDirectory = join(dir, 'a-directory');
writeFileSync(tokens, 'token-1\n');
mkdirSync(aDirectory);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  certificates.cleanup();
});

type Env = Record<string, string | undefined>;

function accepted(argv: string[], env: Env = {}): ServeConfig {
  const result = parseServeFlags(argv, env);
  if (!result.ok) throw new Error(`refused: ${result.flag}: ${result.message}`);
  return result.config;
}

interface Acceptance {
  name: string;
  argv: string[];
  env?: Env;
  expected: Partial<ServeConfig>;
}

const REDIS = ['--registration-storage', 'redis', '--redis-url', 'redis://127.0.0.1:6379'];
const MCS = ['--pool-discovery', 'mcs'];
const REDIS_CONFIG = { registrationStorage: 'redis', redisUrl: 'redis://127.0.0.1:6379' } as const;
const MCS_CONFIG = { poolDiscovery: 'mcs' } as const;

const ACCEPTED: Acceptance[] = [
  { name: 'no flags gives the defaults', argv: [], expected: DEFAULT_CONFIG },
  { name: '--flag value', argv: ['--listen', '127.0.0.1:9000'], expected: { listen: { host: '127.0.0.1', port: 9000 } } },
  { name: '--flag=value', argv: ['--listen=127.0.0.1:9000'], expected: { listen: { host: '127.0.0.1', port: 9000 } } },
  { name: 'IPv6 listen in brackets', argv: ['--listen', '[::1]:8081'], expected: { listen: { host: '::1', port: 8081 } } },
  { name: 'host name listen, port 1', argv: ['--listen=localhost:1'], expected: { listen: { host: 'localhost', port: 1 } } },
  { name: 'port 65535', argv: ['--listen=0.0.0.0:65535'], expected: { listen: { host: '0.0.0.0', port: 65535 } } },
  { name: 'pool discovery mcs', argv: MCS, expected: MCS_CONFIG },
  { name: 'pool discovery karmada', argv: ['--pool-discovery=karmada'], expected: { poolDiscovery: 'karmada' } },
  { name: 'redis storage with a URL', argv: REDIS, expected: REDIS_CONFIG },
  ...['rediss://127.0.0.1:6380', 'redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster', 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001', 'rediss+cluster://127.0.0.1:7000'].map(
    (url): Acceptance => ({
      name: `redis URL ${url}`,
      argv: ['--registration-storage=redis', `--redis-url=${url}`],
      expected: { registrationStorage: 'redis', redisUrl: url },
    }),
  ),
  {
    name: 'redis group with redis storage',
    argv: [...REDIS, '--redis-prefix', 'team-a:pools', '--redis-command-timeout-ms', '250'],
    expected: { ...REDIS_CONFIG, redisPrefix: 'team-a:pools', redisCommandTimeoutMs: 250 },
  },
  { name: 'whole seconds to ms', argv: ['--heartbeat-interval-secs=2', '--lease-duration-secs=6'], expected: { heartbeatIntervalMs: 2000, leaseMs: 6000 } },
  {
    name: 'decimal seconds for short test leases',
    argv: ['--heartbeat-interval-secs=0.1', '--lease-duration-secs=0.5'],
    expected: { heartbeatIntervalMs: 100, leaseMs: 500 },
  },
  { name: 'three decimals are exact', argv: ['--heartbeat-interval-secs=0.001', '--lease-duration-secs=0.002'], expected: { heartbeatIntervalMs: 1, leaseMs: 2 } },
  { name: 'lease of 86400 s', argv: ['--lease-duration-secs', '86400'], expected: { leaseMs: 86_400_000 } },
  {
    name: 'mcs group in mcs mode',
    argv: [...MCS, '--relay-service-suffix=-relay', '--frontend-service-suffix=-fe', '--frontend-port-name', 'web', '--namespace', 'llm'],
    expected: { ...MCS_CONFIG, relayServiceSuffix: '-relay', frontendServiceSuffix: '-fe', frontendPortName: 'web', namespace: 'llm' },
  },
  {
    name: 'a value starting with - in the --flag=-value form',
    argv: [...MCS, '--frontend-service-suffix=-web'],
    expected: { ...MCS_CONFIG, frontendServiceSuffix: '-web' },
  },
  { name: 'TLS cert and key together', argv: ['--tls-cert-path', cert, '--tls-key-path', key], expected: { tlsCertPath: cert, tlsKeyPath: key } },
  { name: 'auth token file', argv: [`--auth-token-file=${tokens}`], expected: { authTokenFile: tokens } },
  // Mode-group rule: only a non-default value of another mode's flag is refused.
  { name: 'mcs flags at their defaults in registrations mode', argv: ['--frontend-port-name', 'http', '--relay-service-suffix=-pool-relay', '--frontend-service-suffix=-frontend'], expected: { poolDiscovery: 'registrations' } },
  { name: 'redis flags at their defaults with memory storage', argv: ['--redis-prefix', 'poolscope', '--redis-command-timeout-ms', '1000'], expected: { registrationStorage: 'memory' } },
  // Environment.
  {
    name: 'every value from env',
    argv: [],
    env: {
      POOLSCOPE_SERVE_LISTEN: '[::1]:9999',
      POOLSCOPE_SERVE_POOL_DISCOVERY: 'karmada',
      POOLSCOPE_SERVE_REGISTRATION_STORAGE: 'redis',
      POOLSCOPE_SERVE_REDIS_URL: 'rediss://127.0.0.1:6380',
      POOLSCOPE_SERVE_REDIS_PREFIX: 'p',
      POOLSCOPE_SERVE_REDIS_COMMAND_TIMEOUT_MS: '500',
      POOLSCOPE_SERVE_HEARTBEAT_INTERVAL_SECS: '1',
      POOLSCOPE_SERVE_LEASE_DURATION_SECS: '3',
      POOLSCOPE_SERVE_RELAY_SERVICE_SUFFIX: '-r',
      POOLSCOPE_SERVE_FRONTEND_SERVICE_SUFFIX: '-f',
      POOLSCOPE_SERVE_FRONTEND_PORT_NAME: 'web',
      POOLSCOPE_SERVE_NAMESPACE: 'llm',
      POOLSCOPE_SERVE_TLS_CERT_PATH: cert,
      POOLSCOPE_SERVE_TLS_KEY_PATH: key,
      POOLSCOPE_SERVE_AUTH_TOKEN_FILE: tokens,
    },
    expected: {
      listen: { host: '::1', port: 9999 },
      poolDiscovery: 'karmada',
      registrationStorage: 'redis',
      redisUrl: 'rediss://127.0.0.1:6380',
      redisPrefix: 'p',
      redisCommandTimeoutMs: 500,
      heartbeatIntervalMs: 1000,
      leaseMs: 3000,
      relayServiceSuffix: '-r',
      frontendServiceSuffix: '-f',
      frontendPortName: 'web',
      namespace: 'llm',
      tlsCertPath: cert,
      tlsKeyPath: key,
      authTokenFile: tokens,
    },
  },
  { name: 'the command line wins over env', argv: ['--lease-duration-secs', '20'], env: { POOLSCOPE_SERVE_LEASE_DURATION_SECS: '30' }, expected: { leaseMs: 20_000 } },
  { name: 'an overridden env value is not validated', argv: ['--listen=127.0.0.1:1'], env: { POOLSCOPE_SERVE_LISTEN: 'garbage' }, expected: { listen: { host: '127.0.0.1', port: 1 } } },
  { name: 'env and flag combine', argv: ['--registration-storage=redis'], env: { POOLSCOPE_SERVE_REDIS_URL: 'redis://127.0.0.1' }, expected: { registrationStorage: 'redis', redisUrl: 'redis://127.0.0.1' } },
  { name: 'unset env variables are ignored', argv: [], env: { POOLSCOPE_SERVE_LISTEN: undefined, POOLSCOPE_SOMETHING_ELSE: 'x' }, expected: DEFAULT_CONFIG },
];

interface Refusal {
  name: string;
  argv: string[];
  env?: Env;
  flag: string;
  message: RegExp;
}

const REFUSED: Refusal[] = [
  // Command-line shape.
  { name: 'unknown flag', argv: ['--no-such-flag', 'x'], flag: '--no-such-flag', message: /^unknown flag/ },
  { name: 'unknown flag in = form', argv: ['--no-such-flag=x'], flag: '--no-such-flag', message: /^unknown flag/ },
  { name: 'single-dash flag', argv: ['-l', 'x'], flag: '-l', message: /^unknown flag/ },
  { name: 'positional argument', argv: ['extra'], flag: 'extra', message: /^unexpected argument/ },
  { name: 'a flag given twice', argv: ['--listen', '127.0.0.1:1', '--listen=127.0.0.1:2'], flag: '--listen', message: /^given more than once$/ },
  { name: 'a flag given twice with the same value', argv: ['--pool-discovery=mcs', '--pool-discovery=mcs'], flag: '--pool-discovery', message: /more than once/ },
  { name: 'missing value at the end', argv: ['--listen'], flag: '--listen', message: /^needs a value$/ },
  { name: 'never swallows the next flag', argv: ['--redis-url', '--listen', 'x'], flag: '--redis-url', message: /^needs a value \(a value starting with '-' must be written --redis-url=VALUE\)$/ },
  { name: 'a value starting with - in the separate form', argv: [...MCS, '--frontend-service-suffix', '-web'], flag: '--frontend-service-suffix', message: /--frontend-service-suffix=VALUE/ },
  { name: 'empty value in = form', argv: ['--redis-prefix='], flag: '--redis-prefix', message: /^must not be empty$/ },
  { name: 'empty value in separate form', argv: ['--listen', ''], flag: '--listen', message: /^must not be empty$/ },
  { name: 'empty env value', argv: [], env: { POOLSCOPE_SERVE_LEASE_DURATION_SECS: '' }, flag: '--lease-duration-secs', message: /^must not be empty \(from POOLSCOPE_SERVE_LEASE_DURATION_SECS\)$/ },
  // --listen
  { name: 'listen without port', argv: ['--listen=localhost'], flag: '--listen', message: /HOST:PORT/ },
  { name: 'listen port 0', argv: ['--listen=0.0.0.0:0'], flag: '--listen', message: /port must be an integer from 1 to 65535/ },
  { name: 'listen port 65536', argv: ['--listen=0.0.0.0:65536'], flag: '--listen', message: /1 to 65535/ },
  { name: 'listen port not an integer', argv: ['--listen=0.0.0.0:80.5'], flag: '--listen', message: /1 to 65535/ },
  { name: 'listen empty port', argv: ['--listen=0.0.0.0:'], flag: '--listen', message: /1 to 65535/ },
  { name: 'listen empty host', argv: ['--listen=:8080'], flag: '--listen', message: /HOST:PORT/ },
  { name: 'listen IPv6 without brackets', argv: ['--listen=::1:8080'], flag: '--listen', message: /IPv6 host goes in brackets/ },
  { name: 'listen brackets around a non-IPv6', argv: ['--listen=[localhost]:8080'], flag: '--listen', message: /not an IPv6 address/ },
  { name: 'listen from env', argv: [], env: { POOLSCOPE_SERVE_LISTEN: '1.2.3.4' }, flag: '--listen', message: /\(from POOLSCOPE_SERVE_LISTEN\)$/ },
  // enums
  { name: 'unknown pool discovery', argv: ['--pool-discovery', 'dns'], flag: '--pool-discovery', message: /^must be one of registrations, mcs, karmada \(got "dns"\)$/ },
  { name: 'unknown storage', argv: ['--registration-storage=etcd'], flag: '--registration-storage', message: /^must be one of memory, redis/ },
  // redis
  { name: 'redis storage without a URL', argv: ['--registration-storage', 'redis'], flag: '--redis-url', message: /^required by --registration-storage redis$/ },
  { name: 'redis URL of another scheme', argv: ['--registration-storage=redis', '--redis-url=http://127.0.0.1:6379'], flag: '--redis-url', message: /^must start with redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/, redis\+cluster:\/\/, rediss\+cluster:\/\/$/ },
  { name: 'redis URL with only a scheme', argv: ['--registration-storage=redis', '--redis-url=redis://'], flag: '--redis-url', message: /needs a host/ },
  { name: 'redis prefix with {', argv: [...REDIS, '--redis-prefix', 'a{b'], flag: '--redis-prefix', message: /hash tag/ },
  { name: 'redis prefix with }', argv: [...REDIS, '--redis-prefix', 'ab}'], flag: '--redis-prefix', message: /hash tag/ },
  { name: 'redis prefix with whitespace', argv: [...REDIS, '--redis-prefix', 'a b'], flag: '--redis-prefix', message: /whitespace/ },
  { name: 'redis timeout 0', argv: [...REDIS, '--redis-command-timeout-ms=0'], flag: '--redis-command-timeout-ms', message: /^must be a positive integer/ },
  { name: 'redis timeout decimal', argv: [...REDIS, '--redis-command-timeout-ms=1.5'], flag: '--redis-command-timeout-ms', message: /positive integer/ },
  { name: 'redis timeout negative', argv: [...REDIS, '--redis-command-timeout-ms=-5'], flag: '--redis-command-timeout-ms', message: /positive integer/ },
  { name: 'redis timeout beyond a timer', argv: [...REDIS, '--redis-command-timeout-ms=2147483648'], flag: '--redis-command-timeout-ms', message: /at most 2147483647/ },
  // seconds
  { name: 'lease 0', argv: ['--lease-duration-secs=0'], flag: '--lease-duration-secs', message: /^must be greater than 0$/ },
  { name: 'lease over a day', argv: ['--lease-duration-secs=86400.001'], flag: '--lease-duration-secs', message: /^must be at most 86400$/ },
  { name: 'lease negative', argv: ['--lease-duration-secs=-1'], flag: '--lease-duration-secs', message: /number of seconds/ },
  { name: 'lease not a number', argv: ['--lease-duration-secs', '15s'], flag: '--lease-duration-secs', message: /number of seconds/ },
  { name: 'lease with 4 decimals', argv: ['--lease-duration-secs', '0.0005'], flag: '--lease-duration-secs', message: /at most 3 decimals/ },
  { name: 'heartbeat 0', argv: ['--heartbeat-interval-secs', '0'], flag: '--heartbeat-interval-secs', message: /^must be greater than 0$/ },
  { name: 'heartbeat equal to the lease', argv: ['--heartbeat-interval-secs', '15'], flag: '--heartbeat-interval-secs', message: /^must be less than --lease-duration-secs \(15\)$/ },
  { name: 'lease below the default heartbeat names the heartbeat', argv: ['--lease-duration-secs', '3'], flag: '--heartbeat-interval-secs', message: /^must be less than --lease-duration-secs \(3\)$/ },
  { name: 'decimal lease in the message', argv: ['--heartbeat-interval-secs=1', '--lease-duration-secs=0.5'], flag: '--heartbeat-interval-secs', message: /\(0\.5\)$/ },
  // suffixes and port name
  { name: 'same suffixes', argv: [...MCS, '--relay-service-suffix=-svc', '--frontend-service-suffix=-svc'], flag: '--frontend-service-suffix', message: /^must differ from --relay-service-suffix \("-svc"\)$/ },
  { name: 'frontend suffix ends with the relay suffix', argv: [...MCS, '--relay-service-suffix=-relay', '--frontend-service-suffix=-fe-relay'], flag: '--frontend-service-suffix', message: /must not end with --relay-service-suffix/ },
  { name: 'relay suffix ends with the frontend suffix', argv: [...MCS, '--frontend-service-suffix=-frontend', '--relay-service-suffix=-relay-frontend'], flag: '--frontend-service-suffix', message: /must not be the end of --relay-service-suffix/ },
  { name: 'suffix with uppercase', argv: [...MCS, '--relay-service-suffix=-Relay'], flag: '--relay-service-suffix', message: /lowercase/ },
  { name: 'empty frontend suffix', argv: [...MCS, '--frontend-service-suffix='], flag: '--frontend-service-suffix', message: /^must not be empty$/ },
  { name: 'empty port name', argv: [...MCS, '--frontend-port-name='], flag: '--frontend-port-name', message: /^must not be empty$/ },
  { name: 'port name not a DNS label', argv: [...MCS, '--frontend-port-name=HTTP_1'], flag: '--frontend-port-name', message: /port name/ },
  { name: 'namespace not a DNS label', argv: [...MCS, '--namespace=Team.A'], flag: '--namespace', message: /namespace name/ },
  // mode groups: non-default values outside their mode
  { name: 'redis URL with memory storage', argv: ['--redis-url', 'redis://127.0.0.1'], flag: '--redis-url', message: /^only applies with --registration-storage redis \(storage is memory\)$/ },
  { name: 'redis prefix with memory storage', argv: ['--redis-prefix', 'other'], flag: '--redis-prefix', message: /only applies with --registration-storage redis/ },
  { name: 'redis timeout with memory storage', argv: ['--redis-command-timeout-ms=200'], flag: '--redis-command-timeout-ms', message: /only applies with --registration-storage redis/ },
  { name: 'redis URL from env with memory storage', argv: [], env: { POOLSCOPE_SERVE_REDIS_URL: 'redis://127.0.0.1' }, flag: '--redis-url', message: /\(from POOLSCOPE_SERVE_REDIS_URL\)$/ },
  { name: 'relay suffix in registrations mode', argv: ['--relay-service-suffix=-relay'], flag: '--relay-service-suffix', message: /^only applies with --pool-discovery mcs or karmada/ },
  { name: 'frontend suffix in registrations mode', argv: ['--frontend-service-suffix=-fe'], flag: '--frontend-service-suffix', message: /only applies with --pool-discovery mcs or karmada/ },
  { name: 'port name in registrations mode', argv: ['--frontend-port-name', 'web'], flag: '--frontend-port-name', message: /only applies with --pool-discovery mcs or karmada/ },
  { name: 'namespace in registrations mode', argv: ['--namespace', 'llm'], flag: '--namespace', message: /only applies with --pool-discovery mcs or karmada/ },
  // TLS and auth
  { name: 'cert without key', argv: ['--tls-cert-path', cert], flag: '--tls-key-path', message: /^required with --tls-cert-path$/ },
  { name: 'key without cert', argv: ['--tls-key-path', key], flag: '--tls-cert-path', message: /^required with --tls-key-path$/ },
  { name: 'unreadable cert', argv: ['--tls-cert-path', missing, '--tls-key-path', key], flag: '--tls-cert-path', message: /^cannot read ".*missing" \(ENOENT\)$/ },
  { name: 'key path is a directory', argv: ['--tls-cert-path', cert, '--tls-key-path', aDirectory], flag: '--tls-key-path', message: /is not a file$/ },
  { name: 'unreadable token file', argv: ['--auth-token-file', missing], flag: '--auth-token-file', message: /^cannot read/ },
];

describe('parseServeFlags accepts', () => {
  it.each(ACCEPTED)('$name', ({ argv, env, expected }) => {
    expect(accepted(argv, env)).toEqual({ ...DEFAULT_CONFIG, ...expected });
  });

  it('returns a fresh config, never DEFAULT_CONFIG itself', () => {
    const config = accepted(['--listen=127.0.0.1:1']);
    expect(DEFAULT_CONFIG.listen).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config).not.toBe(DEFAULT_CONFIG);
  });
});

describe('parseServeFlags refuses', () => {
  it.each(REFUSED)('$name', ({ argv, env, flag, message }) => {
    const result = parseServeFlags(argv, env ?? {});
    expect(result).toMatchObject({ ok: false, flag });
    if (result.ok) return;
    expect(result.message).toMatch(message);
  });

  it('keeps a refusal on one line whatever the value holds', () => {
    const results = [
      parseServeFlags(['--pool-discovery', 'mcs\nkarmada'], {}),
      parseServeFlags(['--listen=a\nb:1'], {}),
      parseServeFlags(['--bad\nflag'], {}),
      parseServeFlags(['odd\rarg'], {}),
    ];
    for (const result of results) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(`${result.flag}: ${result.message}`).not.toMatch(/[\r\n]/);
    }
  });
});

describe('every flag', () => {
  it.each(SERVE_FLAGS.map((spec) => spec.name))('--%s has the env name POOLSCOPE_SERVE_<FLAG> (the log level the shared one) and refuses an empty value', (name) => {
    const spec = SERVE_FLAGS.find((s) => s.name === name)!;
    const expected = name === 'log-level' ? 'POOLSCOPE_LOG_LEVEL' : `POOLSCOPE_SERVE_${name.toUpperCase().replaceAll('-', '_')}`;
    expect(envName('serve', spec)).toBe(expected);
    expect(parseServeFlags([], { [expected]: '' })).toMatchObject({ ok: false, flag: `--${name}` });
    expect(parseServeFlags([`--${name}=`], {})).toMatchObject({ ok: false, flag: `--${name}` });
    // The old name, POOLSCOPE_<FLAG>, is not read (unless it is the shared one).
    if (name !== 'log-level') expect(parseServeFlags([], { [`POOLSCOPE_${name.toUpperCase().replaceAll('-', '_')}`]: '' })).toMatchObject({ ok: true });
  });
});
