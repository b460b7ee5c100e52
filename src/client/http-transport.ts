// HTTP for the relay and the router client, on node:http/https rather than fetch: fetch cannot be given
// a custom CA without undici's own Agent, and undici 8 does not run on Node 20 (docs/design.md "Dependencies"). One keep-alive
// agent per scheme, so a relay's heartbeats and a router's polls reuse their connection. node:http does not
// decode a compressed reply as fetch does: a whole reply in gzip or br is decoded here.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip } from 'node:zlib';

const decoders = new Map<string, (bytes: Buffer) => Promise<Buffer>>([
  ['gzip', promisify(gunzip)],
  ['x-gzip', promisify(gunzip)],
  ['br', promisify(brotliDecompress)],
]);

export interface HttpTransportOptions {
  /** PEM certificate(s) of the CA that signed the servers' certificates; replaces Node's bundled CAs. */
  ca?: string | Buffer;
  /**
   * Sent as `Authorization: Bearer <token>`. A function is asked before every request, so a caller that
   * follows a token file (`poolscope relay --token-file`) sends the token of the moment.
   */
  token?: string | (() => string | undefined);
  /** PEM client certificate (chain) and its private key, for a server that requires mutual TLS; both or neither. */
  cert?: string | Buffer;
  key?: string | Buffer;
}

export interface HttpReply {
  status: number;
  contentType: string;
  /** Decoded from its Content-Encoding (gzip or br). */
  body: string;
  /** The reply's ETag header, if any. */
  etag?: string;
}

export interface HttpStream {
  status: number;
  contentType: string;
  body: IncomingMessage;
  /** Ends the stream and its connection. */
  close(): void;
}

export interface RequestInit {
  method?: 'GET' | 'POST';
  /** A JSON body. */
  json?: string;
  /** Until the whole reply is read (request) or until the headers arrive (stream). */
  timeoutMs: number;
  signal?: AbortSignal;
  accept?: string;
  /** More request headers (`If-None-Match`, `Accept-Encoding`, `Last-Event-ID`). */
  headers?: Record<string, string>;
}

/**
 * What went wrong with TLS, when that is what failed: the server's certificate is not signed by a trusted
 * CA (`--ca-file`), names another host, or is out of date; the server requires a client certificate, or
 * refused the one sent (mutual TLS: `--cert-file`, `--key-file`); the server speaks plain HTTP.
 */
export type TlsProblem =
  | 'untrusted-server-certificate'
  | 'server-certificate-name'
  | 'server-certificate-expired'
  | 'client-certificate-required'
  | 'client-certificate-refused'
  | 'not-tls';

/** A failed exchange: no reply, a timeout, or the caller's abort. `reason` is one line, short enough for a log line. */
export class TransportError extends Error {
  /** Set when the failure is one of TLS the caller can act on (src/client/next-step.ts says how). */
  readonly tls: TlsProblem | undefined;

  constructor(
    readonly reason: string,
    options?: { cause?: unknown; tls?: TlsProblem },
  ) {
    super(reason, options);
    this.name = 'TransportError';
    this.tls = options?.tls;
  }
}

export class HttpTransport {
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent: HttpsAgent;
  private readonly token: HttpTransportOptions['token'];

  constructor(options: HttpTransportOptions = {}) {
    if ((options.cert === undefined) !== (options.key === undefined)) throw new TypeError('cert and key go together (mutual TLS)');
    this.httpsAgent = new HttpsAgent({
      keepAlive: true,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      ...(options.cert === undefined ? {} : { cert: options.cert, key: options.key }),
    });
    this.token = options.token;
  }

  /** One request, its reply read in full. Rejects with TransportError when no reply came in time. */
  async request(url: string, init: RequestInit): Promise<HttpReply> {
    const stream = await this.open(url, init, { wholeReply: true });
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of stream.body) chunks.push(chunk as Buffer);
      // Read in full: the connection goes back to the keep-alive pool, so only the timer is cleared.
      stream.release();
      const { etag, 'content-encoding': coding } = stream.body.headers;
      const body = await decode(Buffer.concat(chunks), coding);
      return { status: stream.status, contentType: stream.contentType, body: body.toString('utf8'), ...(etag === undefined ? {} : { etag }) };
    } catch (error) {
      stream.close();
      throw asTransportError(error, stream.abortReason());
    }
  }

  /** A request whose reply body is read as it comes (Server-Sent Events). The timeout ends at the headers. */
  async stream(url: string, init: RequestInit): Promise<HttpStream> {
    const { status, contentType, body, close } = await this.open(url, init, { wholeReply: false });
    return { status, contentType, body, close };
  }

  /** Closes idle keep-alive connections; open streams are ended by their own close(). */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private open(
    url: string,
    init: RequestInit,
    mode: { wholeReply: boolean },
  ): Promise<HttpStream & { abortReason(): string | undefined; release(): void }> {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const controller = new AbortController();
    let abortReason: string | undefined;
    const abort = (reason: string) => {
      abortReason ??= reason;
      controller.abort();
    };
    const onCallerAbort = () => abort('aborted');
    if (init.signal?.aborted) abort('aborted');
    init.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer = setTimeout(() => abort(`no reply within ${init.timeoutMs} ms`), init.timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      init.signal?.removeEventListener('abort', onCallerAbort);
    };
    const headers: Record<string, string> = { accept: init.accept ?? 'application/json', ...init.headers };
    const token = typeof this.token === 'function' ? this.token() : this.token;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(init.json));
    }
    return new Promise((resolve, reject) => {
      const send = secure ? httpsRequest : httpRequest;
      const request = send(target, {
        method: init.method ?? 'GET',
        headers,
        agent: secure ? this.httpsAgent : this.httpAgent,
        signal: controller.signal,
      });
      request.once('error', (error) => {
        cleanup();
        reject(asTransportError(error, abortReason));
      });
      request.once('response', (response) => {
        // A stream's timeout covers the headers only; a whole reply's covers its body too.
        if (!mode.wholeReply) cleanup();
        const close = () => {
          cleanup();
          abort('closed');
          response.destroy();
        };
        resolve({
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type'] ?? ''),
          body: response,
          close,
          release: cleanup,
          abortReason: () => abortReason,
        });
      });
      request.end(init.json);
    });
  }
}

/** The bytes of a reply decoded from its Content-Encoding; a coding this client does not know fails. */
async function decode(bytes: Buffer, coding: string | undefined): Promise<Buffer> {
  const name = (coding ?? '').trim().toLowerCase();
  if (name === '' || name === 'identity') return bytes;
  const decoder = decoders.get(name);
  if (decoder === undefined) throw new TransportError(`a reply in an unknown Content-Encoding: ${name}`);
  try {
    return await decoder(bytes);
  } catch (error) {
    throw new TransportError(`a reply in ${name} that does not decode: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Any failure of an exchange as a TransportError: the abort's reason when it was ours, else the error's code and words, with the TLS problem it is, if any. */
export function asTransportError(error: unknown, abortReason: string | undefined): TransportError {
  if (error instanceof TransportError) return error;
  if (abortReason !== undefined) return new TransportError(abortReason, { cause: error });
  const code = (error as NodeJS.ErrnoException).code;
  // OpenSSL's messages run over several lines with its source positions: keep the words that say what broke.
  const message = opensslWords(error instanceof Error ? error.message : String(error));
  const tls = tlsProblem(code, message);
  const text = code && !message.includes(code) ? `${code}: ${message}` : message;
  return new TransportError(tls === undefined ? text : `TLS: ${TLS_WORDS[tls]} (${text})`, { cause: error, tls });
}

const TLS_WORDS: Record<TlsProblem, string> = {
  'untrusted-server-certificate': "the replica's certificate is not signed by a CA this client trusts",
  'server-certificate-name': "the replica's certificate does not name the host of its URL",
  'server-certificate-expired': "the replica's certificate is out of date",
  'client-certificate-required': 'the replica requires a client certificate (mutual TLS)',
  'client-certificate-refused': 'the replica refused the client certificate',
  'not-tls': 'the replica does not speak TLS at this address',
};

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

function tlsProblem(code: string | undefined, message: string): TlsProblem | undefined {
  if (code === undefined) return undefined;
  if (UNTRUSTED.has(code)) return 'untrusted-server-certificate';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'server-certificate-name';
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return 'server-certificate-expired';
  if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') return 'client-certificate-required';
  if (/^ERR_SSL_(TLSV1_ALERT_UNKNOWN_CA|SSLV3_ALERT_BAD_CERTIFICATE|SSLV3_ALERT_CERTIFICATE_(EXPIRED|UNKNOWN|UNSUPPORTED)|TLSV1_ALERT_ACCESS_DENIED)$/.test(code)) {
    return 'client-certificate-refused';
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || (code === 'EPROTO' && message.includes('wrong version number'))) return 'not-tls';
  return undefined;
}

/** `write EPROTO 80…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/…:350:\n` → `write EPROTO: wrong version number`. */
function opensslWords(message: string): string {
  const firstLine = message.split(/\r?\n/)[0]!;
  const openssl = /^(.*?)\s*[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(firstLine);
  if (openssl === null) return firstLine;
  return openssl[1] ? `${openssl[1]}: ${openssl[2]}` : openssl[2]!;
}
