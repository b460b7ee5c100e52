// The access guard and the files behind it at their edges: with read tokens only, a token that is none of
// them does not read; every refusal's message; a token set starts empty; a read token file refuses scopes;
// a file followed by its poll alone is not re-read before the poll; client certificate scopes files read
// as token files are (trimmed lines, runs of blanks, line numbers), and an unscoped line of a certificate wins.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../src/contract/index.js';
import { CertificateScopes, readCertificateScopesText } from '../../src/http/certificate-scopes.js';
import { poolTarget } from '../../src/http/scopes.js';
import { TokenFile, TokenFileError } from '../../src/http/token-file.js';
import { TokenSet } from '../../src/http/tokens.js';
import { postJson, request } from '../support/http.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService } from '../support/service.js';
import { throughout } from '../support/wait.js';

const root = mkdtempSync(join(tmpdir(), 'poolscope-auth-edges-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const message = async (response: Response) => errorBodySchema.parse(await response.json()).error.message;

describe('the access guard at its edges', () => {
  it('with read tokens only: a token that is none of them does not read; writes stay open', async () => {
    const svc = await startService({ socket: false, readTokens: ['read-only.1'] });
    try {
      expect((await request(svc.app, '/pools', { headers: { authorization: 'Bearer read-only.1' } })).status).toBe(200);
      expect((await request(svc.app, '/pools', { headers: { authorization: 'Bearer other.2' } })).status).toBe(401);
      expect((await postJson(svc.app, registration())).status).toBe(200);
    } finally {
      await svc.stop();
    }
  });

  it('says why it refused', async () => {
    const svc = await startService({ socket: false, authTokens: ['write.1'], readTokens: ['read.2'] });
    try {
      expect(await message(await request(svc.app, '/pools'))).toBe('a bearer token is required (Authorization: Bearer <token>)');
      expect(await message(await request(svc.app, '/pools', { headers: { authorization: 'Basic x' } }))).toBe('the Authorization header must be "Bearer <token>"');
      expect(await message(await request(svc.app, '/pools', { headers: { authorization: 'Bearer nope' } }))).toBe('the bearer token is not valid');
      expect(await message(await postJson(svc.app, registration(), { authorization: 'Bearer read.2' }))).toBe(
        'this token may read but not write: POST /pools needs a write token',
      );
    } finally {
      await svc.stop();
    }
  });
});

describe('token sets and files at their edges', () => {
  it('a token set starts empty', () => {
    expect(new TokenSet().size).toBe(0);
    expect(new TokenSet().matches('Stryker was here')).toBe(false);
  });

  it('a read token file (scopes: false) refuses a line with scopes', async () => {
    const path = join(root, 'read');
    writeFileSync(path, 'reader c1\n');
    const error = await TokenFile.open({ flag: 'read-token-file', path, logger: captureLogs().logger, scopes: false }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenFileError);
    expect((error as Error).message).toMatch(/line 1: one token a line, nothing after it/);
  });

  it('without the directory watch, a change waits for the poll', async () => {
    const path = join(root, 'polled');
    writeFileSync(path, 'one\n');
    const file = await TokenFile.open({ flag: 'auth-token-file', path, logger: captureLogs().logger, watchDirectory: false, pollMs: 60_000 });
    try {
      writeFileSync(path, 'two\n');
      await throughout(400, 20, () => expect(file.tokens.matches('one')).toBe(true));
    } finally {
      file.close();
    }
  });
});

describe('client certificate scopes at their edges', () => {
  it('reads trimmed lines, runs of blanks between words, and numbers the lines', () => {
    const read = readCertificateScopesText('# relays\n  relay-1   c1\t\tc2/llm  \n\nrelay-2\n');
    expect(read.ok).toBe(true);
    const entries = read.ok ? read.value : [];
    expect(entries.map((entry) => [entry.subject, entry.line, entry.scopes?.map((scope) => scope.text)])).toEqual([
      ['relay-1', 2, ['c1', 'c2/llm']],
      ['relay-2', 4, undefined],
    ]);
  });

  it('a certificate named by a scoped line and an unscoped one writes anything', () => {
    const read = readCertificateScopesText('relay-1 c1\nrelay-1.example\n');
    const scopes = new CertificateScopes(read.ok ? read.value : []);
    const match = scopes.of({ cn: 'relay-1', dns: ['relay-1.example'] });
    expect(match).toEqual({ subjects: ['relay-1', 'relay-1.example'], scopes: undefined });
    expect(scopes.of({ cn: 'relay-1', dns: [] })!.scopes!.map((scope) => scope.covers(poolTarget({ cluster_id: 'c2', namespace: 'n', name: 'p' })))).toEqual([false]);
  });
});
