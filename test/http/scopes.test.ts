// Write scopes (docs/contract.md §8 "Scoped writes"), pure: what each scope covers, what a token file line
// and a client scopes file line may hold, and which scope a credential writes a target with.
import { describe, expect, it } from 'vitest';
import { certificateNames, CertificateScopes, readCertificateScopesText } from '../../src/http/certificate-scopes.js';
import { coveringScope, describeTarget, parseScope, poolTarget, readScopes, routerTarget, type Scope, type WriteTarget } from '../../src/http/scopes.js';
import { readTokenFileText, TokenSet } from '../../src/http/tokens.js';

const pool = (cluster_id: string, namespace = 'llm', name = 'p') => poolTarget({ cluster_id, namespace, name });
const scope = (text: string): Scope => {
  const parsed = parseScope(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
};
const covers = (text: string, target: WriteTarget) => scope(text).covers(target);

describe('parseScope', () => {
  it('a cluster covers every namespace of that cluster, and no other cluster', () => {
    expect(covers('us-east-1', pool('us-east-1', 'llm'))).toBe(true);
    expect(covers('us-east-1', pool('us-east-1', 'other'))).toBe(true);
    expect(covers('us-east-1', pool('us-east-10'))).toBe(false);
    expect(covers('us-east-1', pool('xus-east-1'))).toBe(false);
    expect(covers('us-east-1', routerTarget('gr-1'))).toBe(false);
  });

  it('cluster/namespace covers that namespace of that cluster only', () => {
    expect(covers('eu-west-1/llm', pool('eu-west-1', 'llm'))).toBe(true);
    expect(covers('eu-west-1/llm', pool('eu-west-1', 'llm2'))).toBe(false);
    expect(covers('eu-west-1/llm', pool('eu-west-1', 'xllm'))).toBe(false);
    expect(covers('eu-west-1/llm', pool('eu-west-2', 'llm'))).toBe(false);
  });

  it('* as a piece between - and . separators matches one or more characters of one label', () => {
    expect(covers('us-east-*', pool('us-east-1'))).toBe(true);
    expect(covers('us-east-*', pool('us-east-1b'))).toBe(true);
    expect(covers('us-east-*', pool('us-east-1-b'))).toBe(true);
    expect(covers('us-east-*', pool('us-east-1.corp'))).toBe(false);
    expect(covers('us-east-*', pool('us-west-1'))).toBe(false);
    expect(covers('*-east-1', pool('us-east-1'))).toBe(true);
    expect(covers('*-east-1', pool('east-1'))).toBe(false);
    expect(covers('gpu.*.corp', pool('gpu.a.corp'))).toBe(true);
    expect(covers('gpu.*.corp', pool('gpu.a.b.corp'))).toBe(false);
    expect(covers('c1/team-*', pool('c1', 'team-a'))).toBe(true);
    expect(covers('c1/team-*', pool('c1', 'team'))).toBe(false);
  });

  it('* as a whole part matches any name; never routers', () => {
    expect(covers('*', pool('a.b.c'))).toBe(true);
    expect(covers('*/llm', pool('anything.at-all', 'llm'))).toBe(true);
    expect(covers('*/llm', pool('c1', 'other'))).toBe(false);
    expect(covers('c1/*', pool('c1', 'any'))).toBe(true);
    expect(covers('*', routerTarget('gr-1'))).toBe(false);
  });

  it('a dot in a scope is a dot, not any character', () => {
    expect(covers('a.b', pool('a.b'))).toBe(true);
    expect(covers('a.b', pool('axb'))).toBe(false);
  });

  it('routers covers router registrations only; a cluster named routers is routers/*', () => {
    expect(covers('routers', routerTarget('gr-7f9c'))).toBe(true);
    expect(covers('routers', pool('routers'))).toBe(false);
    expect(covers('routers/*', pool('routers', 'x'))).toBe(true);
  });

  it.each([
    ['a pool', 'c1/llm/p', /never a pool/],
    ['upper case', 'US-east-1', /a scope is routers, CLUSTER or CLUSTER\/NAMESPACE/],
    ['a partial wildcard', 'us-ea*', /a scope is routers/],
    ['a wildcard inside a piece', 'u*s', /a scope is routers/],
    ['two wildcards in a row', '**', /a scope is routers/],
    ['a leading separator', '-*', /a scope is routers/],
    ['an empty namespace', 'c1/', /a scope is routers/],
    ['an empty cluster', '/llm', /a scope is routers/],
    ['a trailing dot', 'c1.', /a scope is routers/],
  ])('refuses %s (%s), naming the rule', (_what, text, rule) => {
    const parsed = parseScope(text);
    expect(typeof parsed).toBe('string');
    expect(parsed).toMatch(rule);
    expect(parsed).toContain(JSON.stringify(text));
  });
});

describe('coveringScope', () => {
  it('the first scope that covers the target; null for an unscoped credential; undefined for none', () => {
    const scopes = ['eu-west-1', 'us-east-*/llm', 'us-east-1'].map(scope);
    expect(coveringScope(scopes, pool('us-east-1', 'llm'))).toBe('us-east-*/llm');
    expect(coveringScope(scopes, pool('us-east-1', 'other'))).toBe('us-east-1');
    expect(coveringScope(scopes, pool('us-west-1'))).toBeUndefined();
    expect(coveringScope([], pool('us-west-1'))).toBeUndefined();
    expect(coveringScope(undefined, pool('us-west-1'))).toBeNull();
    expect(coveringScope(undefined, routerTarget('gr'))).toBeNull();
  });

  it('names targets as refusals do', () => {
    expect(describeTarget(pool('c1', 'llm', 'p'))).toBe('pool c1/llm/p');
    expect(describeTarget(routerTarget('gr-1'))).toBe('router gr-1');
  });

  it('readScopes: no words is unscoped; the first bad word is the problem', () => {
    expect(readScopes([])).toEqual({ scopes: undefined });
    const read = readScopes(['c1', 'c2/llm']);
    expect('scopes' in read && read.scopes?.map((s) => s.text)).toEqual(['c1', 'c2/llm']);
    expect(readScopes(['c1', 'c1/a/b', 'BAD'])).toEqual({ problem: expect.stringMatching(/^"c1\/a\/b": /) });
  });
});

describe('write token files with scopes', () => {
  it('reads `<token> <scope>...` lines, spaces or tabs between, and plain tokens as unscoped', () => {
    const content = readTokenFileText('# writers\n  tok-a  us-east-1\tus-west-*/llm \n\ntok-b\ntok-c routers\n');
    expect(content.ok).toBe(true);
    if (!content.ok) return;
    expect(content.tokens).toEqual(['tok-a', 'tok-b', 'tok-c']);
    expect(content.entries.map((e) => [e.token, e.line, e.scopes?.map((s) => s.text)])).toEqual([
      ['tok-a', 2, ['us-east-1', 'us-west-*/llm']],
      ['tok-b', 4, undefined],
      ['tok-c', 5, ['routers']],
    ]);
  });

  it('refuses a bad scope naming its line, never the token', () => {
    const content = readTokenFileText('secret-token-1 c1\nsecret-token-2 c1/llm/pool\n');
    expect(content).toEqual({ ok: false, problem: expect.stringMatching(/^line 2: "c1\/llm\/pool": a scope names at most a cluster and a namespace/) });
    expect(JSON.stringify(content)).not.toContain('secret-token');
  });

  it('a read token file (or a client\'s) takes no scopes', () => {
    expect(readTokenFileText('r-token c1\n', { scopes: false })).toEqual({
      ok: false,
      problem: 'line 1: one token a line, nothing after it (only --auth-token-file takes scopes after a token)',
    });
    expect(readTokenFileText('r-token\n', { scopes: false }).ok).toBe(true);
  });

  it('TokenSet.find: the matched token\'s line and scopes; a token on several lines has them all, unscoped if one line is', () => {
    const read = readTokenFileText('a c1\nb\na c2/llm\nd c3\nd\n');
    if (!read.ok) throw new Error(read.problem);
    const set = new TokenSet(read.entries);
    expect(set.size).toBe(3);
    expect(set.scoped).toBe(true);
    const a = set.find('a')!;
    expect([a.line, a.scopes?.map((s) => s.text)]).toEqual([1, ['c1', 'c2/llm']]);
    expect(set.find('b')).toMatchObject({ line: 2, scopes: undefined });
    expect(set.find('d')).toMatchObject({ line: 4, scopes: undefined });
    expect(set.find('e')).toBeUndefined();
    expect(set.find('a')!.id).not.toBe(set.find('b')!.id);
    expect(set.find('a')!.id).toBe(a.id);
    expect(new TokenSet(['x', 'y']).scoped).toBe(false);
    expect(new TokenSet(['x', 'y']).find('y')).toMatchObject({ line: 2, scopes: undefined });
  });
});

describe('client certificate scopes', () => {
  it('reads `<subject> <scope>...` lines; a subject alone writes anything', () => {
    const read = readCertificateScopesText('# relays\nrelay-us-east-1 us-east-1\nrelay-admin\nrouter.example routers\n');
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.count).toBe(3);
    const scopes = new CertificateScopes(read.value);
    expect(scopes.of({ cn: 'relay-us-east-1', dns: [] })?.scopes?.map((s) => s.text)).toEqual(['us-east-1']);
    expect(scopes.of({ cn: 'relay-admin', dns: [] })).toEqual({ subjects: ['relay-admin'], scopes: undefined });
    expect(scopes.of({ cn: 'someone', dns: ['router.example'] })?.scopes?.map((s) => s.text)).toEqual(['routers']);
    expect(scopes.of({ cn: 'someone', dns: ['other.example'] })).toBeUndefined();
    expect(scopes.of({ cn: undefined, dns: [] })).toBeUndefined();
  });

  it('a certificate named by its CN and a DNS name has the scopes of both lines', () => {
    const read = readCertificateScopesText('relay c1\nrelay.c2.example c2/llm\nrelay c3\n');
    if (!read.ok) throw new Error(read.problem);
    const match = new CertificateScopes(read.value).of({ cn: 'relay', dns: ['relay.c2.example'] });
    expect(match?.subjects).toEqual(['relay', 'relay.c2.example']);
    expect(match?.scopes?.map((s) => s.text)).toEqual(['c1', 'c3', 'c2/llm']);
  });

  it('refuses a bad scope (naming the line) and a file that names nobody', () => {
    expect(readCertificateScopesText('relay c1/a/b\n')).toEqual({ ok: false, problem: expect.stringMatching(/^line 1: "c1\/a\/b": /) });
    expect(readCertificateScopesText('# nobody\n\n')).toEqual({ ok: false, problem: 'names no certificate subject (only blank lines and # comments)' });
  });

  it('reads the CN and the subjectAltName DNS names of a peer certificate', () => {
    expect(certificateNames({ subject: { CN: 'relay' }, subjectaltname: 'DNS:a.example, IP Address:127.0.0.1, DNS:b.example' } as never)).toEqual({
      cn: 'relay',
      dns: ['a.example', 'b.example'],
    });
    expect(certificateNames({ subject: { CN: ['first', 'second'] } } as never)).toEqual({ cn: 'first', dns: [] });
    expect(certificateNames({ subject: {} } as never)).toEqual({ cn: undefined, dns: [] });
  });
});
