// Client errors that say the next step, one line each (README "Clients", docs/contract.md §6): `pools`
// refused for a token (401) names --token-file, a replica whose CA it does not know --ca-file, a 403 the
// token's scopes, a plain-HTTP replica the http:// URL; `pools --watch` says the same once per change and
// keeps trying. A relay refused for auth backs off, growing and capped, and says so once per change.
// (Mutual TLS without a client certificate, naming --cert-file and --key-file: test/tls/mtls.test.ts.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startRelay, type HeartbeatOutcome } from '../../src/relay/index.js';
import { stopAfterEach } from '../support/cleanup.js';
import { listPools, postJson } from '../support/http.js';
import { captureCliIo, captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { throughout, waitFor } from '../support/wait.js';
import { makeCertificates, type CertificateFiles } from '../tls/certificates.js';

const dir = mkdtempSync(join(tmpdir(), 'poolscope-client-errors-'));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function pools(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureCliIo();
  const code = await main(['pools', ...args], c.io);
  return { code, out: c.out(), err: c.err() };
}

/** One line on stderr, `poolscope: …; next: STEP`. */
function expectOneLineWithNext(err: string, step: string): void {
  expect(err).toMatch(/^poolscope: [^\n]*\n$/);
  expect(err.trimEnd().endsWith(`; next: ${step}`), err).toBe(true);
}

describe('poolscope pools, refused for a token', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ authTokens: ['write-token'], readTokens: ['read-token'], leaseMs: 60_000 });
  });
  afterAll(() => service?.stop());

  it('without a token: the 401 and --token-file, on one line', async () => {
    const result = await pools([`--servers=${service.url}`]);
    expect(result.code).toBe(1);
    expectOneLineWithNext(result.err, 'pass a read token with --token-file');
    expect(result.err).toContain(`${service.url}: GET /pools: 401 unauthorized`);
  });

  it('with a token the replica does not take: says so', async () => {
    const result = await pools([`--servers=${service.url}`, `--token-file=${file('wrong', 'not-a-known-token\n')}`]);
    expect(result.code).toBe(1);
    expectOneLineWithNext(result.err, 'the replica does not accept the token of --token-file: give a read token');
  });

  it('with the read token: listed', async () => {
    const result = await pools([`--servers=${service.url}`, `--token-file=${file('right', 'read-token\n')}`, '-o', 'json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out)).toMatchObject({ pools: [] });
  });

  it('--watch without a token: one stderr line with the next step, and it keeps trying', async () => {
    const c = captureCliIo();
    const running = main(['pools', `--servers=${service.url}`, '--watch'], c.io);
    try {
      await waitFor(() => c.err().includes('next:'));
      const lines = c.err().split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^poolscope: ${service.url}: GET /pools: 401 unauthorized[^\\n]*; next: pass a read token with --token-file; retrying$`));
      // Still the same failure on the tries that follow (its backoff starts at 0.5 s): not said again.
      await throughout(1500, 100, () => expect(c.err().split('\n').filter((line) => line !== '')).toHaveLength(1));
    } finally {
      c.stop();
    }
    expect(await running).toBe(0);
  });
});

describe('poolscope pools over TLS', () => {
  let certs: CertificateFiles;
  let service: TestService;
  beforeAll(async () => {
    certs = makeCertificates();
    service = await startService({ tlsCertPath: certs.server.cert, tlsKeyPath: certs.server.key, leaseMs: 60_000 });
  });
  afterAll(async () => {
    await service?.stop();
    certs?.cleanup();
  });

  it("without --ca-file: the replica's certificate is unknown, --ca-file, on one line (no OpenSSL dump)", async () => {
    const result = await pools([`--servers=${service.url}`]);
    expect(result.code).toBe(1);
    expectOneLineWithNext(result.err, "pass the CA that signed the replica's certificate with --ca-file");
    expect(result.err).toContain("TLS: the replica's certificate is not signed by a CA this client trusts (UNABLE_TO_VERIFY_LEAF_SIGNATURE");
  });

  it('with another CA in --ca-file: says the file holds the wrong CA', async () => {
    const result = await pools([`--servers=${service.url}`, `--ca-file=${certs.otherCa}`]);
    expect(result.code).toBe(1);
    expectOneLineWithNext(result.err, "--ca-file holds no CA that signed the replica's certificate");
  });

  it('https:// to a replica of plain HTTP: use an http:// URL', async () => {
    const plain = await startService({ leaseMs: 60_000 });
    try {
      const result = await pools([`--servers=${plain.url.replace('http:', 'https:')}`, `--ca-file=${certs.ca}`]);
      expect(result.code).toBe(1);
      expectOneLineWithNext(result.err, 'the replica speaks plain HTTP there: use an http:// URL in --servers');
    } finally {
      await plain.stop();
    }
  });
});

describe('a 403 (a token without the scope)', () => {
  // A replica that knows the token but not for this: the contract's error body, as the service sends it.
  let forbidding: Server;
  let url: string;
  const requests: string[] = [];
  beforeAll(async () => {
    forbidding = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.writeHead(403, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'forbidden', message: 'this token may: read' } }));
    });
    await new Promise<void>((resolve) => forbidding.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(forbidding.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => forbidding.close(() => resolve())));

  it('pools: the reply, and the scope, on one line', async () => {
    const result = await pools([`--servers=${url}`, `--token-file=${file('scoped', 'scoped-token\n')}`]);
    expect(result.code).toBe(1);
    expect(result.err).toContain(`${url}: GET /pools: 403 forbidden: this token may: read`);
    expectOneLineWithNext(result.err, 'the token of --token-file lacks the scope of a read: give a read token');
  });

  it('a relay: one error line with the scope as the next step', async () => {
    const logs = captureLogs();
    const relay = startRelay({ servers: [url], registration: registration({ name: 'scoped' }), token: 'scoped-token', logger: logs.logger, backoff: { initialMs: 20, maxMs: 50 } });
    try {
      await waitFor(() => requests.filter((r) => r === 'POST /pools').length >= 4);
    } finally {
      await relay.stop();
    }
    const errors = logs.lines.filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      msg: 'heartbeat refused by every replica; retrying with a growing backoff',
      status: 403,
      reason: '403 forbidden: this token may: read',
      next_step: "the token of --token-file lacks the scope of a write: give a write token (one of the replica's --auth-token-file)",
    });
  });
});

describe('a relay refused for auth', () => {
  const track = stopAfterEach();

  it('backs off, growing to its cap, and says so once per change of the refusal', async () => {
    const tokens = file('server-tokens', 'old-token\n');
    const service = await startService({ authTokenFile: tokens, tokenPollMs: 50, leaseMs: 3000 });
    const beats: HeartbeatOutcome[] = [];
    const logs = captureLogs();
    const relay = track(
      startRelay({
        servers: [service.url],
        registration: registration({ name: 'refused' }),
        token: 'relay-token',
        logger: logs.logger,
        backoff: { initialMs: 40, maxMs: 320, jitter: 0 },
        onHeartbeat: (outcome) => beats.push(outcome),
      }),
    );
    try {
      await waitFor(() => beats.length >= 7, { timeoutMs: 10_000 });
      const times = beats.slice(0, 7).map((beat) => beat.at);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      // 40, 80, 160, 320, 320, 320 ms: each at least its base (a timer is never early), the last ones the cap.
      const bases = [40, 80, 160, 320, 320, 320];
      gaps.forEach((gap, i) => expect(gap, `gap ${i}: ${gaps.join(', ')}`).toBeGreaterThanOrEqual(bases[i]! - 2));
      // Capped: six tries of the uncapped doubling would take 2.5 s; capped they take about 1.2 s.
      expect(times.at(-1)! - times[0]!).toBeLessThan(2520);
      for (const beat of beats) expect(beat).toMatchObject({ ok: false, status: 401 });
      const refusals = () => logs.lines.filter((line) => line.level === 50);
      expect(refusals()).toHaveLength(1);
      expect(refusals()[0]).toMatchObject({
        msg: 'heartbeat refused by every replica; retrying with a growing backoff',
        status: 401,
        next_step: "the replica does not accept the token of --token-file: give a write token (one of the replica's --auth-token-file)",
        backoff_max_ms: 320,
      });

      // The server takes the relay's token: accepted, said once.
      writeFileSync(tokens, 'old-token\nrelay-token\n');
      await waitFor(async () => (await listPools(service.url)).pools.some((pool) => pool.name === 'refused'), { timeoutMs: 10_000 });
      await waitFor(() => logs.lines.some((line) => line.msg === 'heartbeat accepted again'));
      // Refused again (the token removed): a change, said once more.
      writeFileSync(tokens, 'old-token\n');
      await waitFor(() => refusals().length === 2, { timeoutMs: 10_000 });
      const count = beats.length;
      await waitFor(() => beats.length >= count + 3, { timeoutMs: 10_000 });
      expect(refusals()).toHaveLength(2);
      expect((await postJson(service.url, registration(), { authorization: 'Bearer old-token' })).status).toBe(200);
    } finally {
      await relay.stop();
      await service.stop();
    }
  });
});
