// Token files and mutual TLS flags on the real binary (docs/contract.md §6, §8): a token file that could
// never let anyone in refuses the start (exit 2, one stderr line naming the flag and the rule); a running
// replica follows its token files, keeps serving through SIGHUP (which re-reads them), and never logs a
// token.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { postJson } from '../support/http.js';
import { REPO_ROOT, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { eventually, waitFor } from '../support/wait.js';

const bin = join(REPO_ROOT, 'bin', 'poolscope.js');
const dir = mkdtempSync(join(tmpdir(), 'poolscope-tokens-'));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});

/** The binary with no POOLSCOPE_* variable of this process, plus `env`. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('POOLSCOPE_')));
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { cwd: REPO_ROOT, env: { ...inherited, ...env }, timeout: 20_000 }, (_e, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

const REFUSALS: { name: string; args: () => string[]; env?: () => Record<string, string>; line: RegExp }[] = [
  {
    name: 'a write token file of comments only',
    args: () => ['--auth-token-file', file('comments', '# tokens go here\n\n#another\n')],
    line: /^poolscope: --auth-token-file: ".*comments" holds no token \(only blank lines and # comments\)$/,
  },
  {
    name: 'an empty write token file, from the environment',
    args: () => [],
    env: () => ({ POOLSCOPE_AUTH_TOKEN_FILE: file('empty', '') }),
    line: /^poolscope: --auth-token-file: ".*empty" holds no token .*\(from POOLSCOPE_AUTH_TOKEN_FILE\)$/,
  },
  {
    name: 'a write token with a space in it',
    args: () => ['--auth-token-file', file('spaced', 'good-one\nnot good\n')],
    line: /^poolscope: --auth-token-file: ".*spaced" line 2: a token may hold only letters, digits and - \. _ ~ \+ \/ \(then = padding\), the Bearer token characters$/,
  },
  {
    name: 'a read token file of comments only',
    args: () => ['--auth-token-file', file('w', 'w-token\n'), '--read-token-file', file('r-comments', '# none\n')],
    line: /^poolscope: --read-token-file: ".*r-comments" holds no token/,
  },
  {
    name: 'a read token with a character outside the Bearer set',
    args: () => ['--auth-token-file', file('w', 'w-token\n'), '--read-token-file', file('r-bad', 'r"token\n')],
    line: /^poolscope: --read-token-file: ".*r-bad" line 1: a token may hold only/,
  },
  {
    name: 'read tokens without write tokens',
    args: () => ['--read-token-file', file('r', 'r-token\n')],
    line: /^poolscope: --read-token-file: requires --auth-token-file/,
  },
  {
    name: 'a client CA without a server certificate',
    args: () => ['--tls-client-ca-path', file('ca.pem', '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n')],
    line: /^poolscope: --tls-client-ca-path: requires --tls-cert-path and --tls-key-path/,
  },
  {
    name: 'a client CA file with no certificate',
    args: () => ['--tls-client-ca-path', file('not-ca.pem', 'hello\n')],
    line: /^poolscope: --tls-client-ca-path: ".*not-ca\.pem" holds no PEM certificate$/,
  },
];

describe('poolscope serve refuses token files that could let no one in', () => {
  it.each(REFUSALS)('$name', async ({ args, env, line }) => {
    const result = await run(['serve', '--listen=127.0.0.1:1', ...args()], env?.() ?? {});
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^[^\n]*\n$/);
    expect(result.stderr.trimEnd()).toMatch(line);
    // The line names the file, never a token.
    expect(result.stderr).not.toMatch(/good-one|not good|w-token|r-token/);
  });

  it.each(['relay', 'pools', 'simulate'])('%s --token-file refuses a token no header can carry', async (command) => {
    const result = await run([command, '--token-file', file('client-bad', 'bad token\n')]);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd()).toMatch(/^poolscope: --token-file: ".*client-bad" line 1: a token may hold only/);
  });

  it.each(['relay', 'pools', 'simulate'])('%s refuses --cert-file without --key-file', async (command) => {
    const cert = file('client.crt', '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
    const result = await run([command, '--cert-file', cert]);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd()).toBe('poolscope: --key-file: required with --cert-file');
  });
});

describe('a running replica follows its token files', () => {
  let replica: PoolscopeProcess | undefined;
  afterEach(async () => {
    await replica?.stop();
    replica = undefined;
  });

  it('SIGHUP does not end it and re-reads the files; a rewritten file takes effect; no token is logged', async () => {
    const write = file('live-write', 'first-write-token\n');
    const read = file('live-read', 'first-read-token\n');
    replica = await startPoolscope([`--auth-token-file=${write}`, `--read-token-file=${read}`]);
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    expect((await postJson(replica.url, registration(), bearer('first-write-token'))).status).toBe(200);
    expect((await fetch(`${replica.url}/pools`)).status).toBe(401);
    expect((await fetch(`${replica.url}/pools`, { headers: bearer('first-read-token') })).status).toBe(200);
    expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);

    replica.child.kill('SIGHUP');
    await waitFor(() => replica!.logs.some((line) => line.msg === 'reloading token files'), { message: 'the SIGHUP log line' });
    expect((await fetch(`${replica.url}/pools`, { headers: bearer('first-read-token') })).status).toBe(200);
    expect(replica.child.exitCode).toBe(null);

    writeFileSync(write, 'second-write-token\n');
    const changed = Date.now();
    await eventually(async () => expect((await postJson(replica!.url, registration(), bearer('first-write-token'))).status).toBe(401), {
      timeoutMs: 2000,
      intervalMs: 20,
    });
    expect(Date.now() - changed).toBeLessThan(2000);
    expect((await postJson(replica.url, registration(), bearer('second-write-token'))).status).toBe(200);
    // Emptied at runtime: the last good tokens stay, with a warning.
    writeFileSync(write, '\n');
    await waitFor(() => replica!.logs.some((line) => line.level === 40 && line.msg === 'token file not used: keeping the last good tokens'), {
      message: 'the warning for an emptied token file',
    });
    expect((await postJson(replica.url, registration(), bearer('second-write-token'))).status).toBe(200);

    replica.child.kill('SIGHUP');
    await waitFor(() => replica!.logs.filter((line) => line.msg === 'reloading token files').length === 2);
    expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
    const logged = JSON.stringify(replica.logs) + replica.stderr();
    for (const token of ['first-write-token', 'first-read-token', 'second-write-token']) expect(logged).not.toContain(token);
    expect(await replica.stop()).toBe(0);
  });
});

describe('the flags parse', () => {
  it('--read-token-file with --auth-token-file, and --tls-client-ca-path with a certificate', async () => {
    const { parseServeFlags } = await import('../../src/cli/flags.js');
    const pem = file('any.pem', '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
    const parsed = parseServeFlags(
      ['--auth-token-file', file('w-ok', 'w\n'), '--read-token-file', file('r-ok', '# readers\nr\n'), '--tls-cert-path', pem, '--tls-key-path', pem, '--tls-client-ca-path', pem],
      {},
    );
    expect(parsed.ok && parsed.config).toMatchObject({ authTokenFile: join(dir, 'w-ok'), readTokenFile: join(dir, 'r-ok'), tlsClientCaPath: pem });
  });
});
