// The real `poolscope` binary (bin/poolscope.js on the dist/ build from test/global-setup.ts), run as a
// child process: exit codes, the one-line refusal on stderr, help and version.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { envName, SERVE_FLAGS } from '../../src/cli/flag-table.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(repoRoot, 'bin', 'poolscope.js');
const dir = mkdtempSync(join(tmpdir(), 'poolscope-bin-'));
const cert = join(dir, 'tls.crt');
writeFileSync(cert, 'cert');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the binary with no POOLSCOPE_* variable from this process's environment, plus `env`. */
function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('POOLSCOPE_')));
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [bin, ...args],
      { cwd: repoRoot, env: { ...inherited, ...env }, timeout: 20_000 },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

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
  { args: ['serve'], env: { POOLSCOPE_LEASE_DURATION_SECS: '0' }, line: /^poolscope: --lease-duration-secs: must be greater than 0 \(from POOLSCOPE_LEASE_DURATION_SECS\)$/ },
  { args: ['serve'], env: { POOLSCOPE_POOL_DISCOVERY: '' }, line: /^poolscope: --pool-discovery: must not be empty/ },
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
  it.each([
    { args: ['--help'] },
    { args: ['-h'] },
    { args: ['help'] },
    { args: ['serve', '--help'] },
    { args: ['serve', '--lease-duration-secs=0', '-h'] },
  ])(
    '$args prints every flag with its env variable and exits 0',
    async ({ args }) => {
      const result = await run(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      for (const spec of SERVE_FLAGS) {
        expect(result.stdout).toContain(`--${spec.name} `);
        expect(result.stdout).toContain(envName(spec));
      }
      expect(result.stdout).toContain('serve [flags]');
    },
  );

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
  });

  it('an unknown command is named, with the usage, exit 2', async () => {
    const result = await run(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^poolscope: unknown command "frobnicate"\nUsage:/);
  });
});
