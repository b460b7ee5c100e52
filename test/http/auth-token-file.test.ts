// Token files followed while the service runs (docs/contract.md §8, docs/operations.md "Tokens"): a token
// removed from the file is refused within 2 s, whether the file is rewritten, renamed over, or swapped the
// way a Kubernetes Secret volume does it (its `..data` symlink); a file that becomes unusable keeps the
// last good tokens, with one warning; a token never reaches a log line.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TokenFile, TokenFileError } from '../../src/http/token-file.js';
import { DEFAULT_CONFIG } from '../../src/service/config.js';
import { buildService } from '../../src/service/start.js';
import { captureLogs } from '../support/logs.js';
import { postJson, request } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { eventually } from '../support/wait.js';

const root = mkdtempSync(join(tmpdir(), 'poolscope-token-file-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
const freshDir = () => {
  const dir = join(root, String(count++));
  mkdirSync(dir);
  return dir;
};

/** A Secret volume as the kubelet lays it out: `name -> ..data/name`, `..data -> ..<timestamp>`. */
class SecretVolume {
  private generation = 0;
  constructor(
    readonly dir: string,
    readonly name: string,
  ) {}

  get path(): string {
    return join(this.dir, this.name);
  }

  /** Writes a new generation and swaps `..data` to it by a rename, then removes the old one. */
  publish(content: string): void {
    const previous = this.generation === 0 ? undefined : join(this.dir, `..gen_${this.generation}`);
    this.generation++;
    const next = `..gen_${this.generation}`;
    mkdirSync(join(this.dir, next));
    writeFileSync(join(this.dir, next, this.name), content);
    symlinkSync(next, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (previous === undefined) symlinkSync(join('..data', this.name), this.path);
    else rmSync(previous, { recursive: true });
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The status of POST /pools with `token`. */
async function writeStatus(svc: TestService, token: string): Promise<number> {
  return (await postJson(svc.app, registration(), bearer(token))).status;
}

describe('a write token file, followed', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  it('a Secret volume swap (..data symlink renamed): the removed token is refused within 2 s, the new one accepted', async () => {
    const volume = new SecretVolume(freshDir(), 'write-tokens');
    volume.publish('# writers\ntoken-old\n');
    svc = await startService({ socket: false, authTokenFile: volume.path });
    expect(await writeStatus(svc, 'token-old')).toBe(200);
    expect(await writeStatus(svc, 'token-new')).toBe(401);

    volume.publish('token-new\n');
    const swapped = Date.now();
    await eventually(async () => expect(await writeStatus(svc!, 'token-old')).toBe(401), { timeoutMs: 2000, intervalMs: 20 });
    expect(Date.now() - swapped).toBeLessThan(2000);
    expect(await writeStatus(svc, 'token-new')).toBe(200);
    const reloaded = svc.logs.lines.filter((line) => line.msg === 'token file reloaded');
    expect(reloaded.at(-1)).toMatchObject({ level: 30, flag: 'auth-token-file', path: volume.path, tokens: 1 });
  });

  it('a file renamed over (as editors save): the removed token is refused within 2 s', async () => {
    const dir = freshDir();
    const path = join(dir, 'tokens');
    writeFileSync(path, 'alpha\nbeta\n');
    svc = await startService({ socket: false, authTokenFile: path });
    expect(await writeStatus(svc, 'alpha')).toBe(200);
    writeFileSync(join(dir, 'tokens.swp'), 'beta\n');
    renameSync(join(dir, 'tokens.swp'), path);
    await eventually(async () => expect(await writeStatus(svc!, 'alpha')).toBe(401), { timeoutMs: 2000, intervalMs: 20 });
    expect(await writeStatus(svc, 'beta')).toBe(200);
  });

  it('a file that becomes empty, or holds a token no header can carry, keeps the last good tokens and warns once', async () => {
    const dir = freshDir();
    const path = join(dir, 'tokens');
    writeFileSync(path, 'keep-me\n');
    const logs = captureLogs();
    svc = await startService({ socket: false, authTokenFile: path, logs, tokenPollMs: 50 });
    writeFileSync(path, '# rotated out by mistake\n');
    await eventually(() => expect(logs.warnings().map((line) => line.msg)).toContain('token file not used: keeping the last good tokens'));
    expect(await writeStatus(svc, 'keep-me')).toBe(200);
    // Many polls later, still one warning for this content.
    await eventually(() => expect(logs.lines.length).toBeGreaterThan(0));
    const first = logs.warnings();
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ flag: 'auth-token-file', path, tokens: 1, reason: expect.stringMatching(/holds no token/) });

    writeFileSync(path, 'has"quote\n');
    await eventually(() => expect(logs.warnings()).toHaveLength(2));
    expect(logs.warnings()[1]!.reason).toMatch(/^line 1: a token may hold only letters/);
    expect(await writeStatus(svc, 'keep-me')).toBe(200);

    writeFileSync(path, 'next-one\n');
    await eventually(async () => expect(await writeStatus(svc!, 'keep-me')).toBe(401));
    expect(await writeStatus(svc, 'next-one')).toBe(200);
    // No token ever reaches a log line.
    const logged = JSON.stringify(logs.lines);
    for (const token of ['keep-me', 'next-one', 'has"quote', 'has\\"quote']) expect(logged).not.toContain(token);
  });

  it('a read token file is followed too: a removed read token stops reading', async () => {
    const dir = freshDir();
    const write = join(dir, 'write');
    const read = join(dir, 'read');
    writeFileSync(write, 'w-token\n');
    writeFileSync(read, 'r-token\n');
    svc = await startService({ socket: false, authTokenFile: write, readTokenFile: read });
    expect((await request(svc.app, '/pools', { headers: bearer('r-token') })).status).toBe(200);
    writeFileSync(read, 'r-token-2\n');
    await eventually(async () => expect((await request(svc!.app, '/pools', { headers: bearer('r-token') })).status).toBe(401), {
      timeoutMs: 2000,
    });
    expect((await request(svc.app, '/pools', { headers: bearer('r-token-2') })).status).toBe(200);
    expect((await request(svc.app, '/pools', { headers: bearer('w-token') })).status).toBe(200);
  });
});

describe('TokenFile', () => {
  it('without change events (a filesystem that sends none), the poll alone picks up a change within 2 s', async () => {
    const dir = freshDir();
    const path = join(dir, 'tokens');
    writeFileSync(path, 'one\n');
    const logs = captureLogs();
    const file = await TokenFile.open({ flag: 'auth-token-file', path, logger: logs.logger, watchDirectory: false });
    try {
      expect(file.tokens.matches('one')).toBe(true);
      writeFileSync(path, 'two\n');
      const changed = Date.now();
      await eventually(() => expect(file.tokens.matches('one')).toBe(false), { timeoutMs: 2000 });
      expect(Date.now() - changed).toBeLessThan(2000);
      expect(file.tokens.matches('two')).toBe(true);
    } finally {
      file.close();
    }
  });

  it('reload() re-reads at once (what SIGHUP calls)', async () => {
    const dir = freshDir();
    const path = join(dir, 'tokens');
    writeFileSync(path, 'one\n');
    const file = await TokenFile.open({ flag: 'auth-token-file', path, logger: captureLogs().logger, watchDirectory: false, pollMs: 60_000 });
    try {
      writeFileSync(path, 'two\n');
      await file.reload();
      expect(file.tokens.matches('two')).toBe(true);
      expect(file.tokens.matches('one')).toBe(false);
    } finally {
      file.close();
    }
  });

  it.each([
    ['only comments', '# nothing here\n\n   \n', /^--auth-token-file: ".*" holds no token/],
    ['an empty file', '', /^--auth-token-file: ".*" holds no token/],
    ['a token with a quote', 'ok-token\nbad"token\n', /^--auth-token-file: ".*" line 2: a token may hold only letters, digits and - \. _ ~ \+ \/ \(then = padding\)/],
    ['a scope that is no scope', 'ok-token c1\nbad-scope c1/llm/pool\n', /^--auth-token-file: ".*" line 2: "c1\/llm\/pool": a scope names at most a cluster and a namespace/],
    ['a token with a non-ASCII letter', 'tökén\n', /line 1: a token may hold only/],
    ['= inside a token', 'a=b\n', /line 1: a token may hold only/],
  ])('refuses at start a file with %s (the service does not start)', async (_name, content, message) => {
    const path = join(freshDir(), 'tokens');
    writeFileSync(path, content);
    await expect(TokenFile.open({ flag: 'auth-token-file', path, logger: captureLogs().logger })).rejects.toThrow(TokenFileError);
    await expect(TokenFile.open({ flag: 'auth-token-file', path, logger: captureLogs().logger })).rejects.toThrow(message);
    await expect(buildService({ ...DEFAULT_CONFIG, authTokenFile: path }, captureLogs().logger)).rejects.toThrow(message);
  });
});
