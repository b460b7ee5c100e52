// WriteAuthority in process (the route's scope check, src/http/write-authority.ts): it fails closed for a
// write no guard checked and, with client certificate scopes, for a write without a certificate; it logs
// the first write and the first refusal of each key by each credential, and forgets the oldest once it
// holds AUDIT_MEMORY of them (so that key is logged again on its next write).
import type { Context } from 'hono';
import { describe, expect, it } from 'vitest';
import { CertificateScopes } from '../../src/http/certificate-scopes.js';
import { ApiError } from '../../src/http/errors.js';
import { parseScope, poolTarget, routerTarget, type Scope } from '../../src/http/scopes.js';
import { AUDIT_MEMORY, noteWriteToken, WriteAuthority } from '../../src/http/write-authority.js';
import { captureLogs } from '../support/logs.js';

const scope = (text: string) => parseScope(text) as Scope;
/** A request's context as the route sees it: only its identity matters here (no TLS socket). */
const context = () => ({ env: {} }) as unknown as Context;
const target = (n: number | string) => poolTarget({ cluster_id: 'c1', namespace: 'llm', name: `p${n}` });

function refusal(run: () => void): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('not refused');
}

describe('WriteAuthority', () => {
  it('without a token to check or certificates to scope, every write is allowed and nothing is logged', () => {
    const logs = captureLogs();
    new WriteAuthority({ logger: logs.logger }).authorize(context(), target(1));
    expect(logs.lines).toEqual([]);
  });

  it('fails closed: a write no token guard checked may write nothing', () => {
    const logs = captureLogs();
    const authority = new WriteAuthority({ tokenFlag: 'auth-token-file', logger: logs.logger });
    const error = refusal(() => authority.authorize(context(), target(1)));
    expect(error).toMatchObject({
      status: 403,
      code: 'forbidden',
      message: 'this write was not checked for a write token: the route must be behind the token guard',
    });
    expect(logs.warnings()).toEqual([
      expect.objectContaining({ msg: 'write refused: outside the scopes of its credential', credential: 'no write token', pool: 'c1/llm/p1', scopes: [] }),
    ]);
  });

  it('with certificate scopes, a write over no TLS (no certificate) may write nothing', () => {
    const logs = captureLogs();
    const authority = new WriteAuthority({ certificates: new CertificateScopes([{ subject: 'relay-1', line: 1, scopes: undefined }]), logger: logs.logger });
    const error = refusal(() => authority.authorize(context(), routerTarget('r1')));
    expect(error.message).toBe('a write needs a client certificate named in --tls-client-scopes-file');
    expect(logs.warnings()[0]).toMatchObject({ credential: 'no client certificate', router: 'r1', scopes: [] });
  });

  it('logs the first write and the first refusal of a key by a token once each, with the scope', () => {
    const logs = captureLogs();
    const authority = new WriteAuthority({ tokenFlag: 'auth-token-file', logger: logs.logger });
    const c = context();
    noteWriteToken(c, { id: 'aa', line: 3, scopes: [scope('c2'), scope('c1/llm')] });
    authority.authorize(c, target(1));
    authority.authorize(c, target(1));
    authority.authorize(c, target(2));
    expect(logs.lines.map((line) => [line.msg, line.pool, line.scope])).toEqual([
      ['first write of this key by this credential', 'c1/llm/p1', 'c1/llm'],
      ['first write of this key by this credential', 'c1/llm/p2', 'c1/llm'],
    ]);
    expect(logs.lines[0]).toMatchObject({ level: 30, credential: 'the bearer token of --auth-token-file line 3' });
    const outside = poolTarget({ cluster_id: 'c3', namespace: 'llm', name: 'p1' });
    for (let i = 0; i < 2; i++) {
      expect(refusal(() => authority.authorize(c, outside)).message).toBe(
        'the bearer token of --auth-token-file line 3 may not write pool c3/llm/p1: its scopes are c2, c1/llm',
      );
    }
    expect(logs.warnings()).toHaveLength(1);
    expect(logs.warnings()[0]).toMatchObject({ pool: 'c3/llm/p1', scopes: ['c2', 'c1/llm'] });
    // Another token writing the same key is another credential: logged.
    const other = context();
    noteWriteToken(other, { id: 'bb', line: 4, scopes: undefined });
    authority.authorize(other, target(1));
    expect(logs.lines.at(-1)).toMatchObject({ credential: 'the bearer token of --auth-token-file line 4', pool: 'c1/llm/p1', scope: null });
  });

  it(`forgets the oldest key once it remembers ${AUDIT_MEMORY}, and logs it again`, () => {
    const logs = captureLogs('warn');
    const authority = new WriteAuthority({ tokenFlag: 'auth-token-file', logger: logs.logger });
    const c = context();
    noteWriteToken(c, { id: 'aa', line: 1, scopes: undefined });
    for (let i = 0; i < AUDIT_MEMORY; i++) authority.authorize(c, target(i));
    logs.logger.level = 'info';
    // All remembered: the first is not logged again.
    authority.authorize(c, target(0));
    expect(logs.lines).toEqual([]);
    // One more key: the oldest goes, and comes back as news.
    authority.authorize(c, target('new'));
    authority.authorize(c, target(0));
    expect(logs.lines.map((line) => line.pool)).toEqual(['c1/llm/pnew', 'c1/llm/p0']);
    // p0 back pushed out the next oldest, p1, not p2.
    authority.authorize(c, target(2));
    authority.authorize(c, target(1));
    expect(logs.lines.map((line) => line.pool)).toEqual(['c1/llm/pnew', 'c1/llm/p0', 'c1/llm/p1']);
  });
});
