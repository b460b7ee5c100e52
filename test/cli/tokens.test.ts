// Token files and mutual TLS flags on the real binary (docs/contract.md §6, §8): a token file that could
// never let anyone in refuses the start (exit 2, one stderr line naming the flag and the rule); a running
// replica follows its token files, keeps serving through SIGHUP (which re-reads them), and never logs a
// token.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { postJson } from '../support/http.js';
import { runPoolscope, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { eventually, waitFor } from '../support/wait.js';
import { makeCertificates } from '../tls/certificates.js';

const dir = mkdtempSync(join(tmpdir(), 'poolscope-tokens-'));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
// Real certificates: a certificate file is parsed at start, so a stand-in would be refused for that.
const certificates = makeCertificates();
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  certificates.cleanup();
});

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});

const run = (args: string[], env: Record<string, string> = {}) => runPoolscope(args, { env });

const REFUSALS: { name: string; args: () => string[]; env?: () => Record<string, string>; line: RegExp }[] = [
  {
    name: 'a write token file of comments only',
    args: () => ['--auth-token-file', file('comments', '# tokens go here\n\n#another\n')],
    line: /^poolscope: --auth-token-file: ".*comments" holds no token \(only blank lines and # comments\)$/,
  },
  {
    name: 'an empty write token file, from the environment',
    args: () => [],
    env: () => ({ POOLSCOPE_SERVE_AUTH_TOKEN_FILE: file('empty', '') }),
    line: /^poolscope: --auth-token-file: ".*empty" holds no token .*\(from POOLSCOPE_SERVE_AUTH_TOKEN_FILE\)$/,
  },
  {
    name: 'a write token with a character outside the Bearer set',
    args: () => ['--auth-token-file', file('quoted', 'good-one\nnot"good\n')],
    line: /^poolscope: --auth-token-file: ".*quoted" line 2: a token may hold only letters, digits and - \. _ ~ \+ \/ \(then = padding\), the Bearer token characters$/,
  },
  {
    name: 'a write token with a scope that names a pool',
    args: () => ['--auth-token-file', file('scoped', 'good-one us-east-1\nnot-good us-east-1/llm/pool\n')],
    line: /^poolscope: --auth-token-file: ".*scoped" line 2: "us-east-1\/llm\/pool": a scope names at most a cluster and a namespace, never a pool/,
  },
  {
    name: 'a read token with a scope',
    args: () => ['--auth-token-file', file('w', 'w-token\n'), '--read-token-file', file('r-scoped', 'r-token us-east-1\n')],
    line: /^poolscope: --read-token-file: ".*r-scoped" line 1: one token a line, nothing after it \(only --auth-token-file takes scopes after a token\)$/,
  },
  {
    name: 'a client scopes file without mutual TLS',
    args: () => ['--tls-client-scopes-file', file('subjects', 'relay us-east-1\n')],
    line: /^poolscope: --tls-client-scopes-file: requires --tls-client-ca-path/,
  },
  {
    name: 'a client scopes file with a bad scope',
    args: () => ['--tls-client-scopes-file', file('bad-subjects', 'relay US-EAST\n')],
    line: /^poolscope: --tls-client-scopes-file: ".*bad-subjects" line 1: "US-EAST": a scope is routers, CLUSTER or CLUSTER\/NAMESPACE/,
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
    args: () => ['--tls-client-ca-path', certificates.ca],
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
    expect(result.stderr).not.toMatch(/good-one|not"good|not-good|w-token|r-token/);
  });

  it.each(['relay', 'pools', 'simulate'])('%s --token-file refuses a token no header can carry', async (command) => {
    const quoted = await run([command, '--token-file', file('client-bad', 'bad"token\n')]);
    expect(quoted.code).toBe(2);
    expect(quoted.stderr.trimEnd()).toMatch(/^poolscope: --token-file: ".*client-bad" line 1: a token may hold only/);
    const spaced = await run([command, '--token-file', file('client-spaced', 'bad token\n')]);
    expect(spaced.code).toBe(2);
    expect(spaced.stderr.trimEnd()).toMatch(/^poolscope: --token-file: ".*client-spaced" line 1: one token a line, nothing after it/);
  });

  it.each(['relay', 'pools', 'simulate'])('%s refuses --cert-file without --key-file', async (command) => {
    const cert = certificates.client.cert;
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

  it('SIGHUP re-reads at once a change that neither the directory watch nor the 1 s poll has seen', async () => {
    // As Kubernetes mounts a Secret: the file is reached through a symlink to a directory, and an update
    // swaps the symlink whole. The directory watch follows the old directory, which never changes, so
    // only the 1 s poll or a SIGHUP can see the new tokens.
    const root = mkdtempSync(join(dir, 'mount-'));
    for (const version of ['v1', 'v2']) {
      mkdirSync(join(root, version));
      writeFileSync(join(root, version, 'tokens'), `${version}-write-token\n`);
    }
    symlinkSync('v1', join(root, 'data'));
    replica = await startPoolscope([`--auth-token-file=${join(root, 'data', 'tokens')}`]);
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    expect((await postJson(replica.url, registration(), bearer('v1-write-token'))).status).toBe(200);

    // Three swaps, each followed at once by SIGHUP: the tokens are re-read within a few ms of the signal,
    // every time. The poll alone would take 0 to 1 s after it: three times under 100 ms by chance is
    // about one run in a thousand.
    for (const [cycle, version] of ['v2', 'v1', 'v2'].entries()) {
      const before = replica.logs.length;
      symlinkSync(version, join(root, 'data.next'));
      renameSync(join(root, 'data.next'), join(root, 'data'));
      replica.child.kill('SIGHUP');
      const lines = () => replica!.logs.slice(before);
      const signalled = await waitFor(() => lines().find((l) => l.msg === 'reloading token files'), { message: `SIGHUP ${cycle}` });
      const reloaded = await waitFor(() => lines().find((l) => l.msg === 'token file reloaded'), { timeoutMs: 3000, message: `reload ${cycle}` });
      expect(lines().indexOf(reloaded), `cycle ${cycle}: read after the signal`).toBeGreaterThan(lines().indexOf(signalled));
      expect((reloaded.time as number) - (signalled.time as number), `cycle ${cycle}: ms from the signal to the new tokens`).toBeLessThan(100);
      expect((await postJson(replica.url, registration(), bearer(`${version}-write-token`))).status).toBe(200);
    }
  });
});

describe('the flags parse', () => {
  it('--read-token-file with --auth-token-file (scoped), and --tls-client-ca-path with a certificate and a scopes file', async () => {
    const { parseServeFlags } = await import('../../src/cli/flags.js');
    const { server, ca } = certificates;
    const subjects = file('subjects-ok', '# relays\nrelay us-east-1 eu-*/llm\nrouter.example routers\nadmin\n');
    const parsed = parseServeFlags(
      [
        ...['--auth-token-file', file('w-ok', 'w us-east-1\nw2\n'), '--read-token-file', file('r-ok', '# readers\nr\n')],
        ...['--tls-cert-path', server.cert, '--tls-key-path', server.key, '--tls-client-ca-path', ca, '--tls-client-scopes-file', subjects],
      ],
      {},
    );
    expect(parsed.ok && parsed.config).toMatchObject({
      authTokenFile: join(dir, 'w-ok'),
      readTokenFile: join(dir, 'r-ok'),
      tlsClientCaPath: ca,
      tlsClientScopesFile: subjects,
    });
  });
});
