// GET /pools from one replica (readPoolList, src/client/get-pools.ts) over a transport the test answers:
// the request, each failure's words and facts, the 304 rule; and getPools()/getRouters() against replicas
// on loopback: the first that lists wins, and when none does the error names each failure and the flag
// that fixes it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCEPT_ENCODING, getPools, getRouters, NoReplicaListedError, readPoolList } from '../../src/client/get-pools.js';
import { TransportError, type HttpReply, type HttpTransport, type RequestInit } from '../../src/client/http-transport.js';
import { routerListSchema } from '../../src/contract/index.js';
import { listenOnFreePort, type LoopbackServer } from '../support/loopback-server.js';
import { waitFor } from '../support/wait.js';
import { pool as listedPool } from '../support/listed-pool.js';

const SERVER = 'http://127.0.0.1:1';
const pool = listedPool('p1');
const list = { complete: true, revision: '5-0', pools: [pool] };

/** A transport whose every request is answered by `answer`; it records each request. */
function transportOf(answer: (url: string, init: RequestInit) => Partial<HttpReply>) {
  const asked: { url: string; init: RequestInit }[] = [];
  const transport = {
    request: async (url: string, init: RequestInit): Promise<HttpReply> => {
      asked.push({ url, init });
      return { status: 200, contentType: 'application/json', body: '', ...answer(url, init) };
    },
  } as unknown as HttpTransport;
  return { transport, asked };
}

const read = (transport: HttpTransport, more: Partial<Parameters<typeof readPoolList>[0]> = {}) =>
  readPoolList({ transport, server: SERVER, timeoutMs: 4321, ...more });

describe('readPoolList', () => {
  it('asks for the list compressed, with the timeout and the signal, and gives it with its ETag', async () => {
    const { transport, asked } = transportOf(() => ({ body: JSON.stringify(list), etag: '"e1"' }));
    const signal = new AbortController().signal;
    expect(await read(transport, { signal })).toStrictEqual({ ok: true, list, etag: '"e1"' });
    expect(asked).toStrictEqual([{ url: `${SERVER}/pools`, init: { timeoutMs: 4321, signal, headers: { 'accept-encoding': ACCEPT_ENCODING } } }]);
    expect(ACCEPT_ENCODING).toBe('gzip, br');
  });

  it('sends If-None-Match with an ETag, and takes a 304 as the list held still', async () => {
    const { transport, asked } = transportOf(() => ({ status: 304 }));
    expect(await read(transport, { etag: '"e1"' })).toStrictEqual({ ok: true, list: undefined, etag: '"e1"' });
    expect(asked[0]!.init.headers).toStrictEqual({ 'accept-encoding': ACCEPT_ENCODING, 'if-none-match': '"e1"' });
  });

  it('takes a 304 asked without an ETag as a failure', async () => {
    const { transport } = transportOf(() => ({ status: 304 }));
    expect(await read(transport)).toStrictEqual({ ok: false, reason: 'GET /pools: answered 304', status: 304 });
  });

  it("names another status with the contract's error body, and gives the status", async () => {
    const body = JSON.stringify({ error: { code: 'unauthorized', message: 'a bearer token is required' } });
    const { transport } = transportOf(() => ({ status: 401, body }));
    expect(await read(transport)).toStrictEqual({ ok: false, reason: 'GET /pools: 401 unauthorized: a bearer token is required', status: 401 });
    const bare = transportOf(() => ({ status: 502, body: '<html>' }));
    expect(await read(bare.transport)).toStrictEqual({ ok: false, reason: 'GET /pools: answered 502', status: 502 });
  });

  it('refuses a body that is not JSON, or breaks the contract (naming where), with no status', async () => {
    expect(await read(transportOf(() => ({ body: '{"complete":' })).transport)).toStrictEqual({
      ok: false,
      reason: 'GET /pools answered with a body that is not JSON',
    });
    expect(await read(transportOf(() => ({ body: JSON.stringify({ ...list, pools: [{ ...pool, state: 'lapsed' }] }) })).transport)).toStrictEqual({
      ok: false,
      reason: 'GET /pools answered a body that breaks the contract at pools.0.state',
    });
    expect(await read(transportOf(() => ({ body: '[]' })).transport)).toStrictEqual({
      ok: false,
      reason: 'GET /pools answered a body that breaks the contract at the top',
    });
  });

  it('reads another list with its own path and schema', async () => {
    const routers = { complete: true, revision: '3-0', routers: [] };
    const { transport, asked } = transportOf(() => ({ body: JSON.stringify(routers) }));
    expect(await read(transport, { path: '/routers', schema: routerListSchema })).toStrictEqual({ ok: true, list: routers, etag: undefined });
    expect(asked[0]!.url).toBe(`${SERVER}/routers`);
    // The pools' schema would refuse it; the routers' refuses a pool list.
    expect(await read(transportOf(() => ({ body: JSON.stringify(list) })).transport, { path: '/routers', schema: routerListSchema })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^GET \/routers answered a body that breaks the contract at routers$/),
    });
  });

  it('never throws: a transport failure comes back with its reason, and its TLS problem when there is one', async () => {
    const failing = (error: unknown) =>
      ({
        request: async () => {
          throw error;
        },
      }) as unknown as HttpTransport;
    expect(await read(failing(new TransportError('self-signed certificate', { tls: 'untrusted-server-certificate' })))).toStrictEqual({
      ok: false,
      reason: 'self-signed certificate',
      tls: 'untrusted-server-certificate',
    });
    expect(await read(failing(new TransportError('timed out after 4321 ms')))).toStrictEqual({ ok: false, reason: 'timed out after 4321 ms' });
    expect(await read(failing(new TypeError('bad URL')))).toStrictEqual({ ok: false, reason: 'TypeError: bad URL' });
  });
});

describe('getPools and getRouters', () => {
  const servers: LoopbackServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  async function replica(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; asked: string[]; open: () => number }> {
    const asked: string[] = [];
    let open = 0;
    const http = createServer((req, res) => {
      asked.push(req.url ?? '');
      handler(req, res);
    });
    http.on('connection', (socket) => {
      open++;
      socket.on('close', () => open--);
    });
    const server = await listenOnFreePort(http);
    servers.push(server);
    return { url: server.url, asked, open: () => open };
  }
  const answer = (status: number, body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

  it('reads the list from the first replica that gives it, trying each in turn', async () => {
    const down = await replica(answer(503, { error: { code: 'store_unavailable', message: 'Redis is down' } }));
    const up = await replica(answer(200, list));
    expect(await getPools({ servers: [down.url, up.url], random: () => 0 })).toStrictEqual(list);
    expect(down.asked).toEqual(['/pools']);
    expect(up.asked).toEqual(['/pools']);
    // A one-shot read keeps no keep-alive connection open behind it.
    await waitFor(() => down.open() === 0 && up.open() === 0, { message: 'the connections closed' });
  });

  it('reads GET /routers with the routers’ schema', async () => {
    const routers = { complete: false, revision: '2-0', routers: [] };
    const up = await replica(answer(200, routers));
    expect(await getRouters({ servers: [up.url] })).toStrictEqual(routers);
    expect(up.asked).toEqual(['/routers']);
  });

  it('asks each replica once, and names every failure and the flags that fix them', async () => {
    const refused = await replica(answer(401, { error: { code: 'unauthorized', message: 'a bearer token is required' } }));
    const broken = await replica(answer(200, 'not json'));
    const scoped = await replica(answer(403, { error: { code: 'forbidden', message: 'no read scope' } }));
    const error = await getPools({ servers: [refused.url, broken.url, scoped.url], random: () => 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoReplicaListedError);
    const { failures, nextSteps, message } = error as NoReplicaListedError;
    expect(failures).toStrictEqual([
      { ok: false, server: refused.url, reason: 'GET /pools: 401 unauthorized: a bearer token is required', status: 401 },
      { ok: false, server: broken.url, reason: 'GET /pools answered with a body that is not JSON' },
      { ok: false, server: scoped.url, reason: 'GET /pools: 403 forbidden: no read scope', status: 403 },
    ]);
    expect(nextSteps).toStrictEqual(['pass a read token with --token-file', 'the token of --token-file lacks the scope of a read: give a read token']);
    expect(message).toBe(
      `no poolscope replica listed the pools (${refused.url}: GET /pools: 401 unauthorized: a bearer token is required; ` +
        `${broken.url}: GET /pools answered with a body that is not JSON; ${scoped.url}: GET /pools: 403 forbidden: no read scope); ` +
        'next: pass a read token with --token-file; the token of --token-file lacks the scope of a read: give a read token',
    );
    expect([refused, broken, scoped].map((r) => r.asked)).toEqual([['/pools'], ['/pools'], ['/pools']]);
  });

  it('says which flag fixes a failure with what it was given: a token sent, and the routers named', async () => {
    const refused = await replica(answer(401, { error: { code: 'unauthorized', message: 'token not accepted' } }));
    const error = (await getRouters({ servers: [refused.url], token: 'nope' }).catch((e: unknown) => e)) as NoReplicaListedError;
    expect(error.nextSteps).toStrictEqual(['the replica does not accept the token of --token-file: give a read token']);
    expect(error.message).toMatch(/^no poolscope replica listed the routers \(/);
  });

  it('has no next step for a failure no flag fixes, and a message without one', async () => {
    const down = await replica(answer(500, 'oops'));
    const error = (await getPools({ servers: [down.url] }).catch((e: unknown) => e)) as NoReplicaListedError;
    expect(error.nextSteps).toStrictEqual([]);
    expect(error.message).toBe(`no poolscope replica listed the pools (${down.url}: GET /pools: answered 500)`);
    expect(error.name).toBe('NoReplicaListedError');
  });

  it('gives up on a replica after its timeout', async () => {
    const silent = await replica(() => undefined);
    const up = await replica(answer(200, list));
    expect(await getPools({ servers: [silent.url, up.url], random: () => 0, timeoutMs: 200 })).toStrictEqual(list);
  });
});
