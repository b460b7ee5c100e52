// Every start-up failure is one stderr line naming the flag (or file) and the cause, exit 2, for every
// command (docs/contract.md §6). Two walks: every flag of every command (the command table) through a
// refusal of its rule, in-process; and every file a flag loads, broken each way it can be, and every
// failure after the flags (a port in use, MCS without a kubeconfig, a log level pino does not know),
// through the binary, whose stdout must hold no error line or stack.
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { main } from '../../src/cli/main.js';
import { captureCliIo } from '../support/logs.js';
import { runPoolscope } from '../support/process.js';
import { makeCertificates } from '../tls/certificates.js';

const dir = mkdtempSync(join(tmpdir(), 'poolscope-startup-'));
const certs = makeCertificates();
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  certs.cleanup();
});
let files = 0;
function file(content: string, name = `file-${++files}`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
const missing = join(dir, 'missing');
const aDirectory = join(dir, 'a-directory');
mkdirSync(aDirectory);
const tokens = file('token-1\n', 'tokens');
const regions = file('regions:\n  r1: { redis_url: "redis://127.0.0.1:6379" }\n', 'regions.yaml');

interface Refusal {
  args: string[];
  env?: Record<string, string>;
  /** The rule, after `poolscope: --flag: `. */
  rule: RegExp;
}

// ---- Walk 1: each flag's own rule, refused. A flag whose value has no rule beyond "not empty" is in
// FREE_TEXT instead, with why; every flag also refuses an empty value (checked for all below).

const RELAY_FIELDS = { 'cluster-id': 'c', namespace: 'n', name: 'x', model: 'm' } as const;
/** A relay command line with a valid registration, the flag under test given instead of its field. */
const relayArgs = (flag: string, value: string) => [
  ...(flag === 'servers' ? [] : ['--servers=http://127.0.0.1:1']),
  ...Object.entries(RELAY_FIELDS)
    .filter(([name]) => name !== flag)
    .map(([name, v]) => `--${name}=${v}`),
  `--${flag}=${value}`,
];

/** The client flags, refused the same way by relay, pools and simulate. */
const clientRefusals = (command: string): Record<string, Refusal> => {
  const args = (flag: string, value: string) => (command === 'relay' ? relayArgs(flag, value) : [`--${flag}=${value}`]);
  return {
    servers: { args: args('servers', 'ftp://x'), rule: /^"ftp:\/\/x" must be an http:\/\/ or https:\/\/ URL$/ },
    'token-file': { args: args('token-file', file('# nothing\n')), rule: /holds no token/ },
    'ca-file': { args: args('ca-file', certs.server.key), rule: /holds a private key, not a PEM certificate$/ },
    'cert-file': { args: [...args('cert-file', file('hello\n')), `--key-file=${certs.client.key}`], rule: /holds no PEM certificate$/ },
    'key-file': { args: [...args('key-file', certs.client.cert), `--cert-file=${certs.client.cert}`], rule: /holds a certificate, not its private key$/ },
  };
};

const FLAG_REFUSALS: Record<string, Record<string, Refusal>> = {
  serve: {
    listen: { args: ['--listen=nohost'], rule: /^must be HOST:PORT/ },
    'pool-discovery': { args: ['--pool-discovery=dns'], rule: /^must be one of registrations, mcs, karmada/ },
    'heartbeat-interval-secs': { args: ['--heartbeat-interval-secs=0'], rule: /^must be greater than 0$/ },
    'lease-duration-secs': { args: ['--lease-duration-secs=86401'], rule: /^must be at most 86400$/ },
    'registration-storage': { args: ['--registration-storage=etcd'], rule: /^must be one of memory, redis/ },
    'redis-url': { args: ['--registration-storage=redis', '--redis-url=redis://h:6379?db=1'], rule: /query strings and fragments are not supported$/ },
    'redis-prefix': { args: ['--registration-storage=redis', '--redis-url=redis://h', '--redis-prefix=a b'], rule: /whitespace/ },
    'redis-command-timeout-ms': { args: ['--registration-storage=redis', '--redis-url=redis://h', '--redis-command-timeout-ms=0'], rule: /positive integer/ },
    region: { args: ['--region=US_EAST'], rule: /DNS-1123|label/ },
    'regions-file': { args: ['--region=r1', `--regions-file=${missing}`], rule: /^cannot read ".*missing" \(ENOENT\)$/ },
    'region-hold-secs': { args: ['--region=r1', `--regions-file=${regions}`, '--region-hold-secs=0'], rule: /^must be greater than 0$/ },
    'relay-service-suffix': { args: ['--pool-discovery=mcs', '--relay-service-suffix=-Relay'], rule: /lowercase/ },
    'frontend-service-suffix': { args: ['--pool-discovery=mcs', '--frontend-service-suffix=-pool-relay'], rule: /^must differ from --relay-service-suffix/ },
    'frontend-port-name': { args: ['--pool-discovery=mcs', '--frontend-port-name=HTTP_1'], rule: /port name/ },
    namespace: { args: ['--pool-discovery=mcs', '--namespace=Team.A'], rule: /namespace name/ },
    router: { args: ['--router=gr-0=ftp://x'], rule: /^"gr-0=ftp:\/\/x": the url must be an http:\/\/ or https:\/\/ URL with a host$/ },
    'router-service-name': { args: ['--pool-discovery=mcs', '--router-service-name=Global_Router'], rule: /^must be a Service name/ },
    'router-port-name': { args: ['--pool-discovery=mcs', '--router-port-name=RELAY_1'], rule: /^must be a port name/ },
    'max-connections': { args: ['--max-connections=0'], rule: /^must be a positive integer/ },
    'max-watchers': { args: ['--max-watchers=-1'], rule: /^must be a positive integer/ },
    'watch-max-backlog-bytes': { args: ['--watch-max-backlog-bytes=1.5'], rule: /^must be a positive integer/ },
    'log-level': { args: ['--log-level=verbose'], rule: /^must be one of fatal, error, warn, info, debug, trace, silent \(got "verbose"\)$/ },
    'tls-cert-path': { args: [`--tls-cert-path=${certs.server.key}`, `--tls-key-path=${certs.server.key}`], rule: /holds a private key, not a PEM certificate$/ },
    'tls-key-path': { args: [`--tls-cert-path=${certs.server.cert}`, `--tls-key-path=${certs.server.cert}`], rule: /holds a certificate, not its private key$/ },
    'tls-client-ca-path': { args: [`--tls-client-ca-path=${missing}`], rule: /^cannot read/ },
    'tls-client-scopes-file': { args: [`--tls-client-scopes-file=${file('relay us-east-1/llm/p\n')}`], rule: /line 1: "us-east-1\/llm\/p": a scope names at most a cluster and a namespace, never a pool/ },
    'auth-token-file': { args: [`--auth-token-file=${file('')}`], rule: /holds no token/ },
    'read-token-file': { args: [`--read-token-file=${tokens}`], rule: /^requires --auth-token-file/ },
  },
  relay: {
    ...clientRefusals('relay'),
    'fallback-servers': { args: relayArgs('fallback-servers', 'http://127.0.0.1:1'), rule: /is in --servers too/ },
    'registration-file': { args: ['--servers=http://127.0.0.1:1', `--registration-file=${missing}`], rule: /^cannot read ".*missing" \(ENOENT\)$/ },
    'cluster-id': { args: relayArgs('cluster-id', 'Bad_Id'), rule: /^cluster_id: must be a DNS-1123/ },
    namespace: { args: relayArgs('namespace', 'Bad_NS'), rule: /^namespace: must be a DNS-1123/ },
    name: { args: relayArgs('name', 'Bad_N'), rule: /^name: must be a DNS-1123/ },
    model: { args: relayArgs('model', 'x'.repeat(600)), rule: /^model: must be 1 to 512 characters$/ },
    capabilities: { args: relayArgs('capabilities', Array.from({ length: 70 }, (_, i) => `c${i}`).join(',')), rule: /^capabilities: must have at most 64 items$/ },
    capacity: { args: relayArgs('capacity', 'gpus=eight'), rule: /^capacity\.0\.value: / },
    region: { args: relayArgs('region', 'r'.repeat(300)), rule: /^location\.region: / },
    zone: { args: relayArgs('zone', 'z'.repeat(300)), rule: /^location\.zone: / },
    frontends: { args: relayArgs('frontends', 'ftp://x'), rule: /^frontends\.0: must be an http:\/\/ or https:\/\/ URL/ },
    'relay-url': { args: relayArgs('relay-url', 'not-a-url'), rule: /^relay: must be an http:\/\/ or https:\/\/ URL/ },
    'request-timeout-ms': { args: relayArgs('request-timeout-ms', '0'), rule: /^must be an integer from 1 to 600000$/ },
    'log-level': { args: relayArgs('log-level', 'verbose'), rule: /^must be one of fatal, error/ },
  },
  pools: {
    ...clientRefusals('pools'),
    output: { args: ['--output=yaml'], rule: /^must be one of table, json \(got "yaml"\)$/ },
    watch: { args: ['--watch=yes'], rule: /^is a switch: true, false, 1 or 0 \(got "yes"\)$/ },
  },
  routers: {
    ...clientRefusals('routers'),
    output: { args: ['--output=yaml'], rule: /^must be one of table, json \(got "yaml"\)$/ },
    watch: { args: ['--watch=yes'], rule: /^is a switch: true, false, 1 or 0 \(got "yes"\)$/ },
  },
  'router-heartbeat': {
    ...clientRefusals('router-heartbeat'),
    id: { args: ['--id=GR_0', '--url=http://10.0.0.1:1'], rule: /^must be a DNS-1123 label/ },
    url: { args: ['--id=gr-0', '--url=ftp://x'], rule: /^must be an http:\/\/ or https:\/\/ URL with a host$/ },
    region: { args: ['--id=gr-0', '--url=http://10.0.0.1:1', `--region=${'r'.repeat(300)}`], rule: /^must be at most 253 characters$/ },
    zone: { args: ['--id=gr-0', '--url=http://10.0.0.1:1', `--zone=${'z'.repeat(300)}`], rule: /^must be at most 253 characters$/ },
    'log-level': { args: ['--id=gr-0', '--url=http://10.0.0.1:1', '--log-level=verbose'], rule: /^must be one of fatal, error/ },
  },
  healthcheck: {
    listen: { args: ['--listen=nohost'], rule: /^must be HOST:PORT/ },
    'tls-cert-path': { args: [`--tls-cert-path=${file('hello\n')}`], rule: /holds no PEM certificate$/ },
    'timeout-ms': { args: ['--timeout-ms=0'], rule: /^must be a positive integer of at most 60000 \(got "0"\)$/ },
  },
  simulate: {
    ...clientRefusals('simulate'),
    routers: { args: ['--routers=1001'], rule: /^must be an integer from 0 to 1000$/ },
    'fallback-servers': { args: ['--fallback-servers=ftp://x'], rule: /must be an http:\/\/ or https:\/\/ URL$/ },
    pools: { args: ['--pools=0'], rule: /^must be an integer from 1 to 100000$/ },
    'first-pool': { args: ['--first-pool=x'], rule: /^must be an integer from 0 to 1000000$/ },
    'churn-interval-secs': { args: ['--churn-interval-secs=abc'], rule: /^must be a number of seconds/ },
    seed: { args: ['--seed=12345678901'], rule: /^must be an integer from 0 to 999999999$/ },
    'log-level': { args: ['--log-level=verbose'], rule: /^must be one of fatal, error/ },
  },
};

/** Flags whose value has no rule but "not empty": any text is a valid value. */
const FREE_TEXT: Record<string, string[]> = {
  pools: ['model'], // any model name filters (none listed is an answer, not a refusal)
};

async function inProcess(command: string, args: string[], env: Record<string, string> = {}) {
  const c = captureCliIo(env);
  const code = await main([command, ...args], c.io);
  return { code, out: c.out(), err: c.err() };
}

describe('every flag of every command', () => {
  it('has a refusal of its rule here, or is free text', () => {
    for (const command of COMMANDS) {
      for (const flag of command.flags) {
        const covered = FLAG_REFUSALS[command.name]?.[flag.name] !== undefined || FREE_TEXT[command.name]?.includes(flag.name);
        expect(covered, `${command.name} --${flag.name}: add its refusal to FLAG_REFUSALS`).toBe(true);
      }
    }
  });

  const cases = Object.entries(FLAG_REFUSALS).flatMap(([command, flags]) => Object.entries(flags).map(([flag, refusal]) => ({ command, flag, ...refusal })));
  it.each(cases)('$command --$flag: its rule refused, one stderr line naming it, exit 2', async ({ command, flag, args, env, rule }) => {
    const result = await inProcess(command, args, env);
    expect(result.code, result.err).toBe(2);
    expect(result.out).toBe('');
    expect(result.err).toMatch(/^[^\n]*\n$/);
    const prefix = `poolscope: --${flag}: `;
    expect(result.err.startsWith(prefix), result.err).toBe(true);
    expect(result.err.slice(prefix.length).trimEnd()).toMatch(rule);
  });

  const everyFlag = COMMANDS.flatMap((command) => command.flags.map((flag) => ({ command: command.name, flag: flag.name })));
  it.each(everyFlag)('$command --$flag: an empty value is refused, one line, exit 2', async ({ command, flag }) => {
    const result = await inProcess(command, [`--${flag}=`]);
    expect(result).toEqual({ code: 2, out: '', err: `poolscope: --${flag}: must not be empty\n` });
  });
});

// ---- Walk 2: every file a flag loads, and every failure after the flags, through the binary.

interface BinaryFailure {
  name: string;
  args: () => string[];
  env?: () => Record<string, string>;
  line: RegExp;
}

const unmatchedKey = () => certs.stranger.key;
const encryptedKey = () => {
  const pem = file('');
  // openssl writes an encrypted PKCS#8 key of the server's key.
  execFileSync('openssl', ['pkcs8', '-topk8', '-in', certs.server.key, '-passout', 'pass:secret', '-out', pem], { stdio: 'ignore' });
  return pem;
};

const SERVE_FILES: BinaryFailure[] = [
  // TLS: the two, and every other way the pair can be wrong.
  { name: 'a key that is not the certificate\'s', args: () => [`--tls-cert-path=${certs.server.cert}`, `--tls-key-path=${unmatchedKey()}`], line: /^poolscope: --tls-key-path: ".*stranger\.key" is not the private key of the certificate in ".*server\.crt" \(--tls-cert-path\)$/ },
  { name: 'a certificate given as the key', args: () => [`--tls-cert-path=${certs.server.cert}`, `--tls-key-path=${certs.server.cert}`], line: /^poolscope: --tls-key-path: ".*server\.crt" holds a certificate, not its private key$/ },
  { name: 'an encrypted key', args: () => [`--tls-cert-path=${certs.server.cert}`, `--tls-key-path=${encryptedKey()}`], line: /^poolscope: --tls-key-path: ".*" holds an encrypted private key; poolscope needs it unencrypted/ },
  { name: 'a key file of no PEM', args: () => [`--tls-cert-path=${certs.server.cert}`, `--tls-key-path=${file('hello\n')}`], line: /^poolscope: --tls-key-path: ".*" holds no PEM private key$/ },
  { name: 'a key given as the certificate', args: () => [`--tls-cert-path=${certs.server.key}`, `--tls-key-path=${certs.server.key}`], line: /^poolscope: --tls-cert-path: ".*server\.key" holds a private key, not a PEM certificate$/ },
  { name: 'a certificate that does not parse', args: () => [`--tls-cert-path=${file('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')}`, `--tls-key-path=${certs.server.key}`], line: /^poolscope: --tls-cert-path: ".*": certificate 1 does not parse \(/ },
  { name: 'a missing certificate', args: () => [`--tls-cert-path=${missing}`, `--tls-key-path=${certs.server.key}`], line: /^poolscope: --tls-cert-path: cannot read ".*missing" \(ENOENT\)$/ },
  { name: 'a directory as the key', args: () => [`--tls-cert-path=${certs.server.cert}`, `--tls-key-path=${aDirectory}`], line: /^poolscope: --tls-key-path: ".*a-directory" is not a file$/ },
  { name: 'a client CA of no certificate', args: () => [`--tls-cert-path=${certs.server.cert}`, `--tls-key-path=${certs.server.key}`, `--tls-client-ca-path=${file('hello\n')}`], line: /^poolscope: --tls-client-ca-path: ".*" holds no PEM certificate$/ },
  // Token files.
  { name: 'a missing write token file', args: () => [`--auth-token-file=${missing}`], line: /^poolscope: --auth-token-file: cannot read ".*missing" \(ENOENT\)$/ },
  { name: 'a read token file of comments only', args: () => [`--auth-token-file=${tokens}`, `--read-token-file=${file('# none\n')}`], line: /^poolscope: --read-token-file: ".*" holds no token/ },
  // The regions file.
  { name: 'a regions file that is not YAML', args: () => ['--region=r1', `--regions-file=${file('regions: [\n')}`], line: /^poolscope: --regions-file: ".*": not YAML or JSON: / },
  { name: 'a regions file without the region', args: () => ['--region=r2', `--regions-file=${regions}`], line: /^poolscope: --region: must be a region of --regions-file: r1 \(got "r2"\)$/ },
  { name: 'a regions file with a bad Redis URL', args: () => ['--region=r1', `--regions-file=${file('regions:\n  r1: { redis_url: "redis://h:99999" }\n')}`], line: /^poolscope: --regions-file: ".*": regions\.r1\.redis_url: .*port 99999/ },
];

const CLIENT_FILES = (command: string): BinaryFailure[] => {
  const fields = command === 'relay' ? ['--cluster-id=c', '--namespace=n', '--name=x', '--model=m'] : [];
  return [
    { name: `${command}: a missing token file`, args: () => [command, ...fields, `--token-file=${missing}`], line: /^poolscope: --token-file: cannot read ".*missing" \(ENOENT\)$/ },
    { name: `${command}: a CA file of no certificate`, args: () => [command, ...fields, `--ca-file=${file('hello\n')}`], line: /^poolscope: --ca-file: ".*" holds no PEM certificate$/ },
    { name: `${command}: a key that is not the client certificate's`, args: () => [command, ...fields, `--cert-file=${certs.client.cert}`, `--key-file=${certs.stranger.key}`], line: /^poolscope: --key-file: ".*stranger\.key" is not the private key of the certificate in ".*relay\.crt" \(--cert-file\)$/ },
    { name: `${command}: a certificate given as the key`, args: () => [command, ...fields, `--cert-file=${certs.client.cert}`, `--key-file=${certs.client.cert}`], line: /^poolscope: --key-file: ".*" holds a certificate, not its private key$/ },
  ];
};

const RELAY_FILES: BinaryFailure[] = [
  { name: 'relay: a registration file that is not YAML', args: () => ['relay', `--registration-file=${file('cluster_id: [\n', 'broken.yaml')}`], line: /^poolscope: --registration-file: ".*broken\.yaml" is not valid YAML: / },
  { name: 'relay: a registration file breaking the contract', args: () => ['relay', `--registration-file=${file('{"cluster_id": "c", "namespace": "n", "name": "x", "model": "m", "gpus": 8}', 'extra.json')}`], line: /^poolscope: --registration-file: ".*extra\.json": gpus: unknown field$/ },
];

describe('the binary: every file a flag loads, broken', () => {
  beforeAll(() => {
    const buildError = inject('buildError');
    if (buildError !== null) throw new Error(buildError);
  });

  const cases = [
    ...SERVE_FILES.map((failure) => ({ ...failure, args: () => ['serve', '--listen=127.0.0.1:1', ...failure.args()] })),
    ...['relay', 'pools', 'simulate'].flatMap(CLIENT_FILES),
    ...RELAY_FILES,
  ];
  it.concurrent.each(cases)('$name: one stderr line, exit 2, nothing on stdout', async ({ args, env, line }) => {
    const result = await runPoolscope(args(), { env: env?.() ?? {} });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^[^\n]*\n$/);
    expect(result.stderr.trimEnd()).toMatch(line);
  });
});

describe('the binary: failures after the flags', () => {
  let held: Server;
  let heldPort: number;
  const home = join(dir, 'empty-home');
  mkdirSync(home);
  beforeAll(async () => {
    held = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    heldPort = (held.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => held.close(() => resolve())));

  /** stdout may hold the info lines of a start that got under way, never an error line or a stack. */
  function expectNoErrorLines(stdout: string): void {
    for (const text of stdout.split('\n').filter((l) => l !== '')) {
      const line = JSON.parse(text) as { level: number };
      expect(line.level, text).toBeLessThan(50);
      expect(text).not.toContain('"stack"');
    }
  }

  it('a port in use: --listen named, the address and EADDRINUSE', async () => {
    const result = await runPoolscope(['serve', `--listen=127.0.0.1:${heldPort}`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`poolscope: --listen: 127.0.0.1:${heldPort} is in use by another process (EADDRINUSE)\n`);
    expectNoErrorLines(result.stdout);
  });

  it.each(['mcs', 'karmada'])('--pool-discovery %s without any kubeconfig: refused at once, saying what to do', async (mode) => {
    const started = Date.now();
    const result = await runPoolscope(['serve', `--pool-discovery=${mode}`, '--listen=127.0.0.1:1'], { env: { HOME: home, KUBECONFIG: '' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `poolscope: --pool-discovery: ${mode} reads EndpointSlices from a Kubernetes API: no Kubernetes API configured: KUBECONFIG is not set, ` +
        'there is no ~/.kube/config, and this is no pod with a service account; set KUBECONFIG to a kubeconfig file, or run in a pod (deploy/README.md)\n',
    );
    expectNoErrorLines(result.stdout);
    // Refused, not retried: the issue saw four stack traces in 12 s.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it.each([
    ['a missing file', () => missing, /\(ENOENT\)$/],
    ['a file that is no YAML', () => file('clusters: [\n'), /\(.+\)$/],
  ])('KUBECONFIG naming %s: refused, naming the file', async (_name, path, cause) => {
    const kubeconfig = path();
    const result = await runPoolscope(['serve', '--pool-discovery=mcs', '--listen=127.0.0.1:1'], { env: { HOME: home, KUBECONFIG: kubeconfig } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^[^\n]*\n$/);
    expect(result.stderr.startsWith(`poolscope: --pool-discovery: mcs reads EndpointSlices from a Kubernetes API: cannot load the kubeconfig ${JSON.stringify(kubeconfig)} `)).toBe(true);
    expect(result.stderr.trimEnd()).toMatch(cause);
    expectNoErrorLines(result.stdout);
  });

  it.each(['serve', 'relay', 'simulate'])('%s with POOLSCOPE_LOG_LEVEL=verbose: refused as the flag, no pino stack', async (command) => {
    const args = command === 'relay' ? ['relay', '--cluster-id=c', '--namespace=n', '--name=x', '--model=m'] : [command];
    const result = await runPoolscope(args, { env: { POOLSCOPE_LOG_LEVEL: 'verbose' } });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'poolscope: --log-level: must be one of fatal, error, warn, info, debug, trace, silent (got "verbose") (from POOLSCOPE_LOG_LEVEL)\n',
    });
  });
});
