// The real `poolscope` binary (bin/poolscope.js on the dist/ build from test/global-setup.ts), run as a
// child process: exit codes, the one-line refusal on stderr, help and version.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { envName } from '../../src/cli/env-names.js';
import { SERVE_FLAGS } from '../../src/cli/flag-table.js';
import { REPO_ROOT as repoRoot, runPoolscope } from '../support/process.js';
import { makeCertificates } from '../tls/certificates.js';

const dir = mkdtempSync(join(tmpdir(), 'poolscope-bin-'));
const certificates = makeCertificates();
const cert = certificates.server.cert;
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  certificates.cleanup();
});

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});

const run = (args: string[], env: Record<string, string> = {}) => runPoolscope(args, { env });

const REFUSALS: { args: string[]; env?: Record<string, string>; line: RegExp }[] = [
  { args: ['serve', '--lease-duration-secs=0'], line: /^poolscope: --lease-duration-secs: must be greater than 0$/ },
  { args: ['serve', '--heartbeat-interval-secs', '20'], line: /^poolscope: --heartbeat-interval-secs: must be less than --lease-duration-secs \(15\)$/ },
  { args: ['serve', '--redis-url', '--listen', '127.0.0.1:1'], line: /^poolscope: --redis-url: needs a value/ },
  { args: ['serve', '--registration-storage', 'redis'], line: /^poolscope: --redis-url: required by --registration-storage redis$/ },
  { args: ['serve', '--tls-cert-path', cert], line: /^poolscope: --tls-key-path: required with --tls-cert-path$/ },
  { args: ['serve', '--pool-discovery=mcs', '--relay-service-suffix=-x', '--frontend-service-suffix=-x'], line: /^poolscope: --frontend-service-suffix: must differ/ },
  { args: ['serve', '--namespace', 'llm'], line: /^poolscope: --namespace: only applies with --pool-discovery mcs or karmada/ },
  { args: ['serve', '--listen=[::1]:0'], line: /^poolscope: --listen: port must be/ },
  { args: ['serve', '--listen', '127.0.0.1:1', '--listen', '127.0.0.1:2'], line: /^poolscope: --listen: given more than once$/ },
  { args: ['serve', '--listen='], line: /^poolscope: --listen: must not be empty$/ },
  { args: ['serve', '--no-such-flag'], line: /^poolscope: --no-such-flag: unknown flag/ },
  { args: ['serve'], env: { POOLSCOPE_SERVE_LEASE_DURATION_SECS: '0' }, line: /^poolscope: --lease-duration-secs: must be greater than 0 \(from POOLSCOPE_SERVE_LEASE_DURATION_SECS\)$/ },
  { args: ['serve'], env: { POOLSCOPE_SERVE_POOL_DISCOVERY: '' }, line: /^poolscope: --pool-discovery: must not be empty/ },
];

describe('poolscope serve refuses bad flags', () => {
  it.each(REFUSALS)('$args $env', async ({ args, env, line }) => {
    const result = await run(args, env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^[^\n]*\n$/);
    expect(result.stderr.trimEnd()).toMatch(line);
  });
});

describe('poolscope help and version', () => {
  it.each([{ args: ['--help'] }, { args: ['-h'] }, { args: ['help'] }])(
    '$args lists every command and says `poolscope COMMAND --help`, exit 0',
    async ({ args }) => {
      const result = await run(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      for (const command of COMMANDS) expect(result.stdout).toContain(`  poolscope ${command.usage}  `);
      expect(result.stdout).toContain('Run `poolscope COMMAND --help` for the flags of a command');
      // The shared environment names, each with the commands that read it.
      expect(result.stdout).toMatch(/^ {2}POOLSCOPE_LOG_LEVEL +--log-level of serve, relay, router-heartbeat, simulate$/m);
      expect(result.stdout).toMatch(/^ {2}POOLSCOPE_SERVERS +--servers of relay, pools, routers, router-heartbeat, simulate$/m);
    },
  );

  it.each([{ args: ['serve', '--help'] }, { args: ['serve', '--lease-duration-secs=0', '-h'] }, { args: ['help', 'serve'] }])(
    '$args prints every flag of serve with its env name and exits 0',
    async ({ args }) => {
      const result = await run(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      for (const spec of SERVE_FLAGS) {
        expect(result.stdout).toContain(`  --${spec.name} `);
        expect(result.stdout).toContain(`env ${envName('serve', spec)}\n`);
      }
      expect(result.stdout).toMatch(/^poolscope serve \[flags\]: run the service$/m);
      expect(result.stdout).toContain('env POOLSCOPE_LOG_LEVEL\n');
    },
  );

  it('help of an unknown command is refused, exit 2', async () => {
    const result = await run(['help', 'frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^poolscope: help: unknown command "frobnicate"\nUsage:/);
  });

  it('--version prints the version of package.json', async () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const result = await run(['--version']);
    expect(result).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('no command prints the usage on stderr and exits 2', async () => {
    const result = await run([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Usage:\n {2}poolscope serve \[flags\]/);
    expect(result.stderr).toContain('Run `poolscope COMMAND --help` for the flags of a command.');
  });

  it('an unknown command is named, with the usage, exit 2', async () => {
    const result = await run(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^poolscope: unknown command "frobnicate"\nUsage:/);
  });
});
