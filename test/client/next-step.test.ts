// What the clients say to do about a failure (src/client/next-step.ts), and how they put a refusal in a
// few words (src/client/error-reply.ts): the whole table, since each phrase is what a user acts on.
import { describe, expect, it } from 'vitest';
import { describeErrorReply, safeJson } from '../../src/client/error-reply.js';
import { nextStep, type ClientSetup } from '../../src/client/next-step.js';

const setup = (overrides: Partial<ClientSetup> = {}): ClientSetup => ({ token: false, ca: false, cert: false, access: 'read', ...overrides });
const WRITE_TOKEN = "a write token (one of the replica's --auth-token-file)";

describe('nextStep', () => {
  it('a 401: pass a token, or (one was passed) give another, of the kind the access needs', () => {
    expect(nextStep({ status: 401 }, setup())).toBe('pass a read token with --token-file');
    expect(nextStep({ status: 401 }, setup({ access: 'write' }))).toBe(`pass ${WRITE_TOKEN} with --token-file`);
    expect(nextStep({ status: 401 }, setup({ token: true }))).toBe('the replica does not accept the token of --token-file: give a read token');
    expect(nextStep({ status: 401 }, setup({ token: true, access: 'write' }))).toBe(`the replica does not accept the token of --token-file: give ${WRITE_TOKEN}`);
  });

  it('a 403: the token lacks the scope of the access', () => {
    expect(nextStep({ status: 403 }, setup({ token: true }))).toBe('the token of --token-file lacks the scope of a read: give a read token');
    expect(nextStep({ status: 403 }, setup({ token: true, access: 'write' }))).toBe(`the token of --token-file lacks the scope of a write: give ${WRITE_TOKEN}`);
  });

  it('each TLS problem names the flag or the fix', () => {
    expect(nextStep({ tls: 'untrusted-server-certificate' }, setup())).toBe("pass the CA that signed the replica's certificate with --ca-file");
    expect(nextStep({ tls: 'untrusted-server-certificate' }, setup({ ca: true }))).toBe("--ca-file holds no CA that signed the replica's certificate");
    expect(nextStep({ tls: 'server-certificate-name' }, setup())).toBe("use a host in --servers that the replica's certificate names");
    expect(nextStep({ tls: 'server-certificate-expired' }, setup())).toBe("renew the replica's certificate (its --tls-cert-path)");
    expect(nextStep({ tls: 'client-certificate-required' }, setup())).toBe('pass a client certificate with --cert-file and --key-file');
    expect(nextStep({ tls: 'client-certificate-refused' }, setup({ cert: true }))).toBe(
      "pass a client certificate signed by the replica's --tls-client-ca-path with --cert-file",
    );
    expect(nextStep({ tls: 'not-tls' }, setup())).toBe('the replica speaks plain HTTP there: use an http:// URL in --servers');
  });

  it('nothing for what no flag fixes: another status, no status, no TLS problem', () => {
    expect(nextStep({ status: 503 }, setup())).toBeUndefined();
    expect(nextStep({ status: 400 }, setup({ access: 'write' }))).toBeUndefined();
    expect(nextStep({}, setup())).toBeUndefined();
  });

  it('a status decides before a TLS problem', () => {
    expect(nextStep({ status: 401, tls: 'not-tls' }, setup())).toBe('pass a read token with --token-file');
  });
});

describe('describeErrorReply', () => {
  it("the contract's error body: status, code and message", () => {
    expect(describeErrorReply(401, JSON.stringify({ error: { code: 'unauthorized', message: 'a bearer token is required' } }))).toBe(
      '401 unauthorized: a bearer token is required',
    );
  });

  it('a code without a message: no dangling colon', () => {
    expect(describeErrorReply(403, JSON.stringify({ error: { code: 'forbidden' } }))).toBe('403 forbidden');
    expect(describeErrorReply(403, JSON.stringify({ error: { code: 'forbidden', message: '' } }))).toBe('403 forbidden');
  });

  it('anything else: the bare status', () => {
    expect(describeErrorReply(502, '<h1>Bad Gateway</h1>')).toBe('answered 502');
    expect(describeErrorReply(500, JSON.stringify({ error: { code: 7, message: 'x' } }))).toBe('answered 500');
    expect(describeErrorReply(500, JSON.stringify({ error: 'boom' }))).toBe('answered 500');
    expect(describeErrorReply(500, 'null')).toBe('answered 500');
    expect(describeErrorReply(500, '')).toBe('answered 500');
  });

  it('safeJson: the value, or undefined for text that is not JSON', () => {
    expect(safeJson('{"a":[1]}')).toEqual({ a: [1] });
    expect(safeJson('{')).toBeUndefined();
  });
});
