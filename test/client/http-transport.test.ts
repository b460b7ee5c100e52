// HttpTransport (src/client/http-transport.ts) on its own, against a node:http server a test scripts: the
// headers it sends (accept, token of the moment, a JSON body's type and length), a whole reply decoded from
// gzip, x-gzip or br (an unknown coding, or bytes that do not decode, fail with the coding's name), the
// ETag, a timeout that covers a whole reply's body but only a stream's headers, the caller's abort; and
// every failure as one line, with the TLS problem it is (asTransportError: Node's codes for each).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { asTransportError, HttpTransport, TransportError, type TlsProblem } from '../../src/client/http-transport.js';
import { listenOnFreePort } from '../support/loopback-server.js';

interface Server {
  url: string;
  seen: IncomingMessage[];
  bodies: string[];
  stop(): Promise<void>;
}

const stopping: { stop(): Promise<void> }[] = [];
const transports: HttpTransport[] = [];
afterEach(async () => {
  for (const transport of transports.splice(0)) transport.close();
  await Promise.all(stopping.splice(0).map((s) => s.stop()));
});

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const seen: IncomingMessage[] = [];
  const bodies: string[] = [];
  const http = createServer((req, res) => {
    seen.push(req);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      handle(req, res);
    });
  });
  const server = { seen, bodies, ...(await listenOnFreePort(http)) };
  stopping.push(server);
  return server;
}

function transport(options: ConstructorParameters<typeof HttpTransport>[0] = {}): HttpTransport {
  const made = new HttpTransport(options);
  transports.push(made);
  return made;
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('the request succeeded'),
    (error: unknown) => {
      expect(error).toBeInstanceOf(TransportError);
      return error as TransportError;
    },
  );

describe('HttpTransport', () => {
  it('sends GET with accept application/json and no authorization, and reads the reply, its type and ETag', async () => {
    const server = await serve((_, res) => res.writeHead(200, { 'content-type': 'application/json', etag: '"r1"' }).end('{"ok":true}'));
    const reply = await transport().request(`${server.url}/pools`, { timeoutMs: 2000 });
    expect(reply).toEqual({ status: 200, contentType: 'application/json', body: '{"ok":true}', etag: '"r1"' });
    const [req] = server.seen;
    expect(req!.method).toBe('GET');
    expect(req!.url).toBe('/pools');
    expect(req!.headers.accept).toBe('application/json');
    expect(req!.headers.authorization).toBeUndefined();
    expect(req!.headers['content-type']).toBeUndefined();
  });

  it('leaves out an ETag the reply has none of, and gives an empty type for a reply without one', async () => {
    const server = await serve((_, res) => {
      res.removeHeader('content-type');
      res.writeHead(204).end();
    });
    const reply = await transport().request(server.url, { timeoutMs: 2000 });
    expect(reply).toEqual({ status: 204, contentType: '', body: '' });
    expect('etag' in reply).toBe(false);
  });

  it('POSTs a JSON body with its type and byte length, the accept and headers asked, and the bearer token', async () => {
    const server = await serve((_, res) => res.writeHead(200).end('{}'));
    const json = JSON.stringify({ name: 'pool-é' });
    await transport({ token: 'secret-1' }).request(server.url, { method: 'POST', json, timeoutMs: 2000, accept: 'text/plain', headers: { 'if-none-match': '"x"' } });
    const [req] = server.seen;
    expect(req!.method).toBe('POST');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['content-length']).toBe(String(Buffer.byteLength(json)));
    expect(req!.headers.accept).toBe('text/plain');
    expect(req!.headers['if-none-match']).toBe('"x"');
    expect(req!.headers.authorization).toBe('Bearer secret-1');
    expect(server.bodies[0]).toBe(json);
  });

  it('asks a token function before every request, and sends none while it gives none', async () => {
    const server = await serve((_, res) => res.writeHead(200).end());
    let token: string | undefined = 'first';
    const client = transport({ token: () => token });
    await client.request(server.url, { timeoutMs: 2000 });
    token = 'second';
    await client.request(server.url, { timeoutMs: 2000 });
    token = undefined;
    await client.request(server.url, { timeoutMs: 2000 });
    expect(server.seen.map((req) => req.headers.authorization)).toEqual(['Bearer first', 'Bearer second', undefined]);
  });

  it.each([
    ['gzip', gzipSync],
    ['x-gzip', gzipSync],
    ['br', brotliCompressSync],
    [' GZIP ', gzipSync],
    ['identity', (bytes: Buffer) => bytes],
  ])('decodes a whole reply in %j', async (coding, encode) => {
    const server = await serve((_, res) => res.writeHead(200, { 'content-encoding': coding }).end(encode(Buffer.from('{"pools":[]}'))));
    expect((await transport().request(server.url, { timeoutMs: 2000 })).body).toBe('{"pools":[]}');
  });

  it('fails on a coding it does not know, and on bytes that do not decode, naming the coding', async () => {
    const server = await serve((req, res) =>
      req.url === '/zstd' ? res.writeHead(200, { 'content-encoding': 'zstd' }).end('x') : res.writeHead(200, { 'content-encoding': 'gzip' }).end('not gzip'),
    );
    const client = transport();
    expect((await failure(client.request(`${server.url}/zstd`, { timeoutMs: 2000 }))).reason).toBe('a reply in an unknown Content-Encoding: zstd');
    expect((await failure(client.request(`${server.url}/bad`, { timeoutMs: 2000 }))).reason).toMatch(/^a reply in gzip that does not decode: .+/);
  });

  it("times out a whole reply whose body stalls after its headers, with the timeout's words", async () => {
    const server = await serve((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"pools":');
    });
    const started = Date.now();
    const error = await failure(transport().request(server.url, { timeoutMs: 150 }));
    expect(error.reason).toBe('no reply within 150 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('times out a request that gets no reply at all', async () => {
    const silent = await serve(() => {});
    expect((await failure(transport().request(silent.url, { timeoutMs: 100 }))).reason).toBe('no reply within 100 ms');
  });

  it("a stream's timeout ends at its headers: the body stays open past it, until close()", async () => {
    const server = await serve((_, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
      setTimeout(() => res.write('data: later\n\n'), 200);
    });
    const stream = await transport().stream(server.url, { timeoutMs: 100, accept: 'text/event-stream' });
    expect(stream.status).toBe(200);
    expect(stream.contentType).toBe('text/event-stream');
    expect(server.seen[0]!.headers.accept).toBe('text/event-stream');
    let text = '';
    stream.body.setEncoding('utf8');
    stream.body.on('data', (chunk: string) => (text += chunk));
    const closed = new Promise((resolve) => stream.body.once('close', resolve));
    await expect.poll(() => text, { timeout: 2000 }).toBe(': hello\n\ndata: later\n\n');
    stream.close();
    await closed;
    expect(stream.body.destroyed).toBe(true);
  });

  it("fails with 'aborted' when the caller's signal is aborted, before or during the request", async () => {
    const silent = await serve(() => {});
    const client = transport();
    expect((await failure(client.request(silent.url, { timeoutMs: 5000, signal: AbortSignal.abort() }))).reason).toBe('aborted');
    const controller = new AbortController();
    const pending = failure(client.request(silent.url, { timeoutMs: 5000, signal: controller.signal }));
    await expect.poll(() => silent.seen.length, { timeout: 2000 }).toBeGreaterThanOrEqual(1);
    controller.abort();
    expect((await pending).reason).toBe('aborted');
  });

  it('says a refused connection in its own words', async () => {
    const server = await serve(() => {});
    const url = server.url;
    await server.stop();
    stopping.splice(0);
    const error = await failure(transport().request(url, { timeoutMs: 2000 }));
    expect(error.reason).toMatch(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    expect(error.tls).toBeUndefined();
  });

  it('refuses a client certificate without its key, or a key without its certificate', () => {
    expect(() => new HttpTransport({ cert: 'c' })).toThrow(new TypeError('cert and key go together (mutual TLS)'));
    expect(() => new HttpTransport({ key: 'k' })).toThrow(new TypeError('cert and key go together (mutual TLS)'));
  });
});

describe('asTransportError', () => {
  const nodeError = (code: string | undefined, message: string) => Object.assign(new Error(message), code === undefined ? {} : { code });

  it.each<[string, string, TlsProblem, string]>([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate', 'untrusted-server-certificate', "the replica's certificate is not signed by a CA this client trusts"],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate', 'untrusted-server-certificate', "the replica's certificate is not signed by a CA this client trusts"],
    ['ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames", 'server-certificate-name', "the replica's certificate does not name the host of its URL"],
    ['CERT_HAS_EXPIRED', 'certificate has expired', 'server-certificate-expired', "the replica's certificate is out of date"],
    ['CERT_NOT_YET_VALID', 'certificate is not yet valid', 'server-certificate-expired', "the replica's certificate is out of date"],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'tlsv13 alert certificate required', 'client-certificate-required', 'the replica requires a client certificate (mutual TLS)'],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'tlsv1 alert unknown ca', 'client-certificate-refused', 'the replica refused the client certificate'],
    ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', 'sslv3 alert bad certificate', 'client-certificate-refused', 'the replica refused the client certificate'],
    ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED', 'sslv3 alert certificate expired', 'client-certificate-refused', 'the replica refused the client certificate'],
    ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN', 'sslv3 alert certificate unknown', 'client-certificate-refused', 'the replica refused the client certificate'],
    ['ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNSUPPORTED', 'sslv3 alert certificate unsupported', 'client-certificate-refused', 'the replica refused the client certificate'],
    ['ERR_SSL_TLSV1_ALERT_ACCESS_DENIED', 'tlsv1 alert access denied', 'client-certificate-refused', 'the replica refused the client certificate'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number', 'not-tls', 'the replica does not speak TLS at this address'],
  ])('%s is %s', (code, message, tls, words) => {
    const error = asTransportError(nodeError(code, message), undefined);
    expect(error.tls).toBe(tls);
    expect(error.reason).toBe(`TLS: ${words} (${code}: ${message})`);
  });

  it("names a plain-HTTP peer from EPROTO's OpenSSL words, on one line without OpenSSL's positions", () => {
    const message = 'write EPROTO 80A8F6E1:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:354:\n';
    const error = asTransportError(nodeError('EPROTO', message), undefined);
    expect(error.tls).toBe('not-tls');
    expect(error.reason).toBe('TLS: the replica does not speak TLS at this address (write EPROTO: wrong version number)');
  });

  it('an OpenSSL line with nothing before it keeps only its words; another EPROTO is no TLS problem', () => {
    const error = asTransportError(nodeError('EPROTO', '80A8F6E1:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:ssl.c:1:'), undefined);
    expect(error.tls).toBeUndefined();
    expect(error.reason).toBe('EPROTO: sslv3 alert handshake failure');
  });

  it("keeps an unknown ERR_SSL_ code's words, unclassified; only a code's whole name classifies it", () => {
    for (const code of ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA_X', 'X_ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED']) {
      const error = asTransportError(nodeError(code, 'alert'), undefined);
      expect(error.tls).toBeUndefined();
      expect(error.reason).toBe(`${code}: alert`);
    }
  });

  it('says the code once when the message names it, and only the first line of a message of several', () => {
    expect(asTransportError(nodeError('ECONNRESET', 'read ECONNRESET'), undefined).reason).toBe('read ECONNRESET');
    expect(asTransportError(nodeError('ETIMEDOUT', 'connect timed out\r\nmore'), undefined).reason).toBe('ETIMEDOUT: connect timed out');
    expect(asTransportError(nodeError(undefined, 'socket hang up\nat somewhere'), undefined).reason).toBe('socket hang up');
    expect(asTransportError('a string thrown', undefined).reason).toBe('a string thrown');
  });

  it("gives our abort's reason over the error's, keeps the error as its cause, and passes a TransportError through", () => {
    const cause = nodeError('ECONNRESET', 'read ECONNRESET');
    const aborted = asTransportError(cause, 'no reply within 10 ms');
    expect(aborted.reason).toBe('no reply within 10 ms');
    expect(aborted.cause).toBe(cause);
    expect(aborted.tls).toBeUndefined();
    const classified = asTransportError(nodeError('CERT_HAS_EXPIRED', 'certificate has expired'), undefined);
    expect(classified.cause).toBeInstanceOf(Error);
    const same = new TransportError('already one', { tls: 'not-tls' });
    expect(asTransportError(same, 'aborted')).toBe(same);
    expect(same.name).toBe('TransportError');
    expect(same.message).toBe('already one');
  });
});
