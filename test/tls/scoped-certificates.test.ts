// Scoped writes for client certificates (docs/contract.md §8): with mutual TLS and
// --tls-client-scopes-file, a certificate (by its CN or a subjectAltName DNS name) writes only what its
// line's scopes cover; one no line names writes nothing; the first write of each key is logged with the
// scope that allowed it; with write tokens as well, both must allow the write.
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, type RegistrationInput } from '../../src/contract/index.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { eventually } from '../support/wait.js';
import { makeCertificates, type CertificateFiles } from './certificates.js';

let certs: CertificateFiles;
const read = (path: string) => readFileSync(path, 'utf8');
const pool = (cluster_id: string, namespace = 'llm', name = 'p1') => registration({ cluster_id, namespace, name });

/** POST /pools over mutual TLS with `pair`'s certificate (and a bearer token, if given). */
function post(url: string, pair: { cert: string; key: string }, body: RegistrationInput, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      `${url}/pools`,
      {
        method: 'POST',
        ca: read(certs.ca),
        cert: read(pair.cert),
        key: read(pair.key),
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

const forbidden = (reply: { status: number; body: string }) => {
  expect(reply.status).toBe(403);
  const body = errorBodySchema.parse(JSON.parse(reply.body));
  expect(body.error.code).toBe('forbidden');
  return body.error.message;
};

beforeAll(() => {
  certs = makeCertificates();
});
afterAll(() => certs?.cleanup());

describe('client certificate scopes', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({
      tlsCertPath: certs.server.cert,
      tlsKeyPath: certs.server.key,
      tlsClientCaPath: certs.ca,
      clientScopes: ['# the relays', 'relay us-east-1 us-east-2/llm', 'relay-b.example eu-west-1/llm'],
      leaseMs: 30_000,
    });
  });
  afterAll(() => svc?.stop());

  it('a certificate named by its CN writes what its scopes cover, and nothing else', async () => {
    expect((await post(svc.url, certs.client, pool('us-east-1', 'any'))).status).toBe(200);
    expect((await post(svc.url, certs.client, pool('us-east-2', 'llm'))).status).toBe(200);
    expect(forbidden(await post(svc.url, certs.client, pool('eu-west-1')))).toBe(
      'the client certificate (CN relay) may not write pool eu-west-1/llm/p1: its scopes are us-east-1, us-east-2/llm',
    );
  });

  it('a certificate named by a subjectAltName DNS name has that line\'s scopes', async () => {
    expect((await post(svc.url, certs.dnsNamed, pool('eu-west-1', 'llm', 'b'))).status).toBe(200);
    expect(forbidden(await post(svc.url, certs.dnsNamed, pool('us-east-1', 'llm', 'b')))).toBe(
      'the client certificate (CN named-by-dns, DNS relay-b.example) may not write pool us-east-1/llm/b: its scopes are eu-west-1/llm',
    );
  });

  it('a certificate of the CA that no line names may write nothing', async () => {
    expect(forbidden(await post(svc.url, certs.unlisted, pool('us-east-1', 'llm', 'u')))).toBe(
      'the client certificate (CN unlisted) is named in no line of --tls-client-scopes-file: it may write nothing',
    );
    const stored = (await svc.store.snapshot()).records.map((r) => r.registration.name);
    expect(stored).not.toContain('u');
  });

  it('logs the first write of each key by each certificate, with the scope', async () => {
    await post(svc.url, certs.client, pool('us-east-1', 'audit', 'a1'));
    await post(svc.url, certs.client, pool('us-east-1', 'audit', 'a1'));
    const lines = svc.logs.lines.filter((l) => l.msg === 'first write of this key by this credential' && l.pool === 'us-east-1/audit/a1');
    expect(lines).toEqual([expect.objectContaining({ credential: 'the client certificate (CN relay)', scope: 'us-east-1' })]);
  });
});

describe('client certificate scopes with write tokens', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({
      tlsCertPath: certs.server.cert,
      tlsKeyPath: certs.server.key,
      tlsClientCaPath: certs.ca,
      clientScopes: ['relay us-east-1'],
      authTokens: ['wide-token', 'narrow-token us-east-1/llm'],
      leaseMs: 30_000,
    });
  });
  afterAll(() => svc?.stop());

  it('both the token and the certificate must allow the write', async () => {
    expect((await post(svc.url, certs.client, pool('us-east-1', 'llm'), 'narrow-token')).status).toBe(200);
    expect(forbidden(await post(svc.url, certs.client, pool('us-east-1', 'other'), 'narrow-token'))).toMatch(/^the bearer token of --auth-token-file line 2 may not write/);
    expect(forbidden(await post(svc.url, certs.client, pool('eu-west-1', 'llm'), 'wide-token'))).toMatch(/^the client certificate \(CN relay\) may not write/);
    expect((await post(svc.url, certs.client, pool('us-east-1', 'other'), 'wide-token')).status).toBe(200);
    expect((await post(svc.url, certs.client, pool('us-east-1', 'llm'))).status).toBe(401);
  });
});

describe('--tls-client-scopes-file, followed', () => {
  it('a changed line takes effect within 2 s, with a log line counting the subjects; a bad one keeps the last good scopes', async () => {
    const path = join(certs.dir, 'client-scopes');
    writeFileSync(path, 'relay us-east-1\n');
    const svc = await startService({
      tlsCertPath: certs.server.cert,
      tlsKeyPath: certs.server.key,
      tlsClientCaPath: certs.ca,
      tlsClientScopesFile: path,
      leaseMs: 30_000,
    });
    try {
      expect((await post(svc.url, certs.client, pool('us-east-1'))).status).toBe(200);
      expect((await post(svc.url, certs.client, pool('eu-west-1'))).status).toBe(403);
      writeFileSync(path, 'relay eu-west-1\nunlisted us-east-1\n');
      await eventually(async () => expect((await post(svc.url, certs.client, pool('eu-west-1'))).status).toBe(200), { timeoutMs: 2000, intervalMs: 20 });
      expect((await post(svc.url, certs.client, pool('us-east-1'))).status).toBe(403);
      expect((await post(svc.url, certs.unlisted, pool('us-east-1', 'llm', 'u'))).status).toBe(200);
      expect(svc.logs.lines.find((l) => l.msg === 'client scopes file reloaded')).toMatchObject({ flag: 'tls-client-scopes-file', path, subjects: 2 });

      writeFileSync(path, 'relay eu-west-1/a/b\n');
      await eventually(() => expect(svc.logs.warnings().map((l) => l.msg)).toContain('client scopes file not used: keeping the last good subjects'), { timeoutMs: 2000 });
      expect((await post(svc.url, certs.client, pool('eu-west-1'))).status).toBe(200);
    } finally {
      await svc.stop();
    }
  });
});
