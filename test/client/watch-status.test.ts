// What watchPools() and watchRouters() tell their caller besides the pools (src/client/watch-pools.ts):
// the status (which replica, which transport, whether the list is complete, why the last try failed, and
// what flag fixes it), each change of it once, its regions as copies, listeners that throw, and the log
// lines a failure or a fall-back to polling writes, against a replica the test scripts (scripted-replica.ts).
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, connect } from 'node:net';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { watchPools, watchRouters } from '../../src/client/index.js';
import { listenOnFreePort } from '../support/loopback-server.js';
import { captureLogs } from '../support/logs.js';
import { eventually, waitFor } from '../support/wait.js';
import { makeCertificates } from '../tls/certificates.js';
import { delay, FAILED, follow, json, notSse, POLLING, poolList, region, replica, running, serving, stopAll } from './scripted-replica.js';

afterEach(stopAll);

describe('the watch status', () => {
  it("names a replica's failure on the stream (no status: the stream's reply is not the list's) and clears it once one serves", async () => {
    const { url, script } = await replica(json(503, { error: { code: 'store_unavailable', message: 'down' } }));
    const { watch, statuses, lines } = follow([url]);
    // Before anything was tried: this replica, disconnected, nothing known.
    expect(watch.status).toStrictEqual({ server: url, transport: 'disconnected', complete: false, revision: undefined, regions: undefined, failure: undefined });
    await waitFor(() => watch.status.failure !== undefined);
    expect(watch.status).toStrictEqual({
      server: url,
      transport: 'disconnected',
      complete: false,
      revision: undefined,
      regions: undefined,
      failure: { server: url, reason: 'GET /pools/watch answered 503' },
    });
    expect(lines(FAILED)[0]).toMatchObject({ level: 40, server: url, reason: 'GET /pools/watch answered 503', next: url });
    // The same failure again and again is one status change, not one per try.
    await waitFor(() => lines(FAILED).length >= 3);
    expect(statuses.filter((status) => status.failure !== undefined)).toHaveLength(1);
    // A reply that is no stream at all is no stream that ended, and no reason to poll.
    expect(lines('watch stream ended')).toEqual([]);
    expect(lines(POLLING)).toEqual([]);

    script.handler = serving(poolList);
    await watch.ready;
    await eventually(() =>
      expect(watch.status).toStrictEqual({ server: url, transport: 'sse', complete: true, revision: '5-0', regions: poolList.regions, failure: undefined }),
    );
    expect(statuses.at(-1)).toStrictEqual(watch.status);
  });

  it('names a failed GET /pools with its status, where the path cuts streams', async () => {
    const refused = json(401, { error: { code: 'unauthorized', message: 'a bearer token is required' } });
    const { url } = await replica((req, res) => (req.url === '/pools/watch' ? json(200, {})(req, res) : refused(req, res)));
    const { watch, lines } = follow([url]);
    await eventually(() =>
      expect(watch.status.failure).toStrictEqual({ server: url, reason: 'GET /pools: 401 unauthorized: a bearer token is required', status: 401 }),
    );
    expect(watch.status.transport).toBe('disconnected');
    // GET /pools failed too: the replica is failing, not only its streams.
    expect(lines(POLLING)).toEqual([]);
  });

  it('names the TLS problem a flag fixes: https to a replica that speaks plain HTTP', async () => {
    const { url } = await replica(serving(poolList));
    const https = url.replace('http://', 'https://');
    const { watch, lines } = follow([https]);
    const failure = await waitFor(() => watch.status.failure);
    expect(failure).toMatchObject({ server: https, tls: 'not-tls', reason: expect.stringMatching(/^TLS: the replica does not speak TLS at this address/) });
    expect(Object.keys(failure).sort()).toEqual(['reason', 'server', 'tls']);
    expect(lines(FAILED)[0]).toMatchObject({ server: https, reason: failure.reason });
  });

  it('falls back to polling where streams are cut, says why, and keeps completeness on a 304', async () => {
    let polls = 0;
    let notModified = 0;
    const { url } = await replica((req, res) => {
      if (req.url === '/pools/watch') return notSse(req, res);
      polls++;
      if (req.headers['if-none-match'] === '"e1"') {
        notModified++;
        res.writeHead(304, { etag: '"e1"' });
        return res.end();
      }
      json(200, poolList, { etag: '"e1"' })(req, res);
    });
    const { watch, lines, statuses } = follow([url], { sseRetryIntervalMs: 60_000 });
    await watch.ready;
    await waitFor(() => polls >= 4);
    // It sent the list's ETag back each time after the first.
    expect(notModified).toBeGreaterThanOrEqual(3);
    expect(lines('event stream unavailable; polling GET /pools')).toEqual([
      expect.objectContaining({ level: 40, server: url, reason: 'GET /pools/watch answered 200 application/json' }),
    ]);
    expect(watch.status).toStrictEqual({ server: url, transport: 'polling', complete: true, revision: '5-0', regions: poolList.regions, failure: undefined });
    // Polling, each 304 keeps the status as it was: one change to polling, none per poll.
    expect(statuses.filter((status) => status.transport === 'polling')).toHaveLength(1);
    expect(watch.pools.size).toBe(1);
  });

  it('names a TLS problem of GET /pools with the flag that fixes it, where the path cuts streams', async () => {
    const certificates = makeCertificates();
    try {
      // The first connection reaches a TLS replica whose stream is no event stream; every later one (GET
      // /pools) a replica that speaks plain HTTP at the same address.
      const tlsReplica = createHttpsServer({ cert: readFileSync(certificates.server.cert), key: readFileSync(certificates.server.key) }, notSse);
      const tls = await listenOnFreePort(tlsReplica);
      running.servers.push(tls);
      const plain = await replica(serving(poolList));
      let connections = 0;
      const front = await listenOnFreePort(
        createTcpServer((socket) => {
          const target = new URL(connections++ === 0 ? tls.url : plain.url);
          const upstream = connect(Number(target.port), '127.0.0.1');
          socket.pipe(upstream).pipe(socket);
          socket.on('error', () => upstream.destroy());
          upstream.on('error', () => socket.destroy());
        }),
      );
      running.servers.push(front);
      const https = front.url.replace('http://', 'https://');
      const { watch, statuses } = follow([https], { ca: readFileSync(certificates.ca) });
      await waitFor(() => watch.status.failure);
      const first = statuses.find((status) => status.failure !== undefined)!.failure!;
      expect(first).toMatchObject({ server: https, tls: 'not-tls', reason: expect.stringMatching(/^TLS: the replica does not speak TLS at this address/) });
      expect(Object.keys(first).sort()).toEqual(['reason', 'server', 'tls']);
      // Its first failure was the GET /pools (the second connection), told with its TLS problem.
      expect(connections).toBeGreaterThanOrEqual(2);
    } finally {
      certificates.cleanup();
    }
  });

  it('clears a failure once polling serves, and a failed poll is a failure', async () => {
    let mode: 'down' | 'polling' | 'down again' = 'down';
    const { url } = await replica((req, res) => {
      if (mode === 'polling') return req.url === '/pools/watch' ? notSse(req, res) : json(200, poolList)(req, res);
      json(503, { error: { code: 'store_unavailable', message: mode } })(req, res);
    });
    const { watch } = follow([url], { sseRetryIntervalMs: 60_000 });
    await waitFor(() => watch.status.failure);
    mode = 'polling';
    await eventually(() => expect(watch.status).toMatchObject({ transport: 'polling', complete: true, failure: undefined }));
    mode = 'down again';
    await eventually(() =>
      expect(watch.status).toMatchObject({
        transport: 'disconnected',
        complete: false,
        failure: { server: url, reason: 'GET /pools: 503 store_unavailable: down again', status: 503 },
      }),
    );
  });

  it('a 304 after a failed poll serves again: polling, with the completeness of the list held', async () => {
    let polls = 0;
    const { url } = await replica((req, res) => {
      if (req.url === '/pools/watch') return notSse(req, res);
      polls++;
      if (polls === 2) return json(503, { error: { code: 'store_unavailable', message: 'once' } })(req, res);
      if (req.headers['if-none-match'] === '"e1"') {
        res.writeHead(304, { etag: '"e1"' });
        return res.end();
      }
      json(200, poolList, { etag: '"e1"' })(req, res);
    });
    const { watch, statuses } = follow([url], { sseRetryIntervalMs: 60_000 });
    await waitFor(() => polls >= 4);
    expect(statuses.map((status) => [status.transport, status.complete, status.failure?.status])).toEqual([
      ['polling', true, undefined],
      ['disconnected', false, undefined],
      ['disconnected', false, 503],
      ['polling', true, undefined],
    ]);
    expect(watch.status).toMatchObject({ transport: 'polling', complete: true, failure: undefined });
  });

  it('goes back from polling to the stream, telling the change of transport alone', async () => {
    let streams = false;
    const { url } = await replica((req, res) => (req.url === '/pools/watch' && !streams ? notSse(req, res) : serving(poolList)(req, res)));
    const { watch, statuses } = follow([url], { sseRetryIntervalMs: 200 });
    await waitFor(() => watch.status.transport === 'polling');
    streams = true;
    await waitFor(() => watch.status.transport === 'sse');
    expect(statuses.map((status) => status.transport)).toEqual(['polling', 'sse']);
  });

  it('sleeps its backoff after each round in which every replica failed, and not within a round', async () => {
    const down = await replica(json(503, { error: { code: 'store_unavailable', message: 'down' } }));
    const { watch } = follow([down.url], { backoff: { initialMs: 300, maxMs: 300, jitter: 0 } });
    await delay(1000);
    // About four tries in a second; without the backoff, hundreds.
    expect(down.script.asked.length).toBeGreaterThanOrEqual(2);
    expect(down.script.asked.length).toBeLessThanOrEqual(12);
    await watch.close();

    const first = await replica(json(503, { error: { code: 'store_unavailable', message: 'down' } }));
    const second = await replica(serving(poolList));
    const started = Date.now();
    const next = follow([first.url, second.url], { backoff: { initialMs: 20_000, maxMs: 20_000, jitter: 0 } });
    await next.watch.ready;
    // The second replica at once, not after a backoff of 20 s.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('gives copies of its regions: a caller that edits one changes nothing', async () => {
    const { url } = await replica(serving(poolList));
    const { watch } = follow([url]);
    await watch.ready;
    const status = watch.status;
    status.regions![0]!.dropped = true;
    status.regions!.pop();
    expect(watch.status.regions).toStrictEqual(poolList.regions);
  });

  it('tells a change of regions alone, and nothing for a list that changes nothing it reports', async () => {
    const held = { ...poolList, revision: '6-0', regions: [region('eu'), { name: 'us', complete: false, dropped: false, reason: 'unreachable' }] };
    let stream: ServerResponse | undefined;
    const { url } = await replica((req, res) => {
      stream = res;
      serving(poolList)(req, res);
    });
    const { watch, statuses } = follow([url]);
    await watch.ready;
    const before = statuses.length;
    stream!.write(`event: resync\ndata: ${JSON.stringify(held)}\n\n`);
    await waitFor(() => watch.status.revision === '6-0');
    expect(statuses.slice(before)).toStrictEqual([{ server: url, transport: 'sse', complete: true, revision: '6-0', regions: held.regions, failure: undefined }]);
    // Only its revision differs: no status change is told (the revision is read from the status).
    stream!.write(`event: resync\ndata: ${JSON.stringify({ ...held, revision: '7-0' })}\n\n`);
    await waitFor(() => watch.status.revision === '7-0');
    expect(statuses).toHaveLength(before + 1);
    // Its completeness alone changes: told.
    stream!.write(`event: resync\ndata: ${JSON.stringify({ ...held, revision: '8-0', complete: false })}\n\n`);
    await waitFor(() => watch.status.revision === '8-0');
    expect(statuses).toHaveLength(before + 2);
    expect(statuses.at(-1)!.complete).toBe(false);
  });
});

describe('listeners', () => {
  it("logs a listener that throws and still calls the others; an unsubscribed one hears nothing", async () => {
    const { url } = await replica(serving(poolList));
    const logs = captureLogs();
    const watch = watchPools({ servers: [url], logger: logs.logger, random: () => 0 });
    running.watches.push(watch);
    const heard: string[] = [];
    watch.onChange(() => {
      throw new Error('listener bug');
    });
    watch.onChange((change) => heard.push(change.key));
    const off = watch.onChange((change) => heard.push(`gone ${change.key}`));
    off();
    const statusesHeard: string[] = [];
    watch.onStatus(() => {
      throw new Error('status listener bug');
    });
    const offStatus = watch.onStatus((status) => statusesHeard.push(status.transport));
    offStatus();
    await watch.ready;
    expect(heard).toEqual(['c1/llm/p1']);
    expect(statusesHeard).toEqual([]);
    const thrown = logs.lines.filter((line) => line.msg === 'a pool watch listener threw');
    expect(thrown.map((line) => (line.err as { message: string }).message).sort()).toEqual(['listener bug', 'status listener bug']);
    expect(thrown.every((line) => line.level === 50)).toBe(true);
  });

  it('names the router watch in its log lines, and follows /routers', async () => {
    const routers = { complete: true, revision: '2-0', routers: [] };
    const { url, script } = await replica(serving(routers));
    const logs = captureLogs();
    const watch = watchRouters({ servers: [url], logger: logs.logger, random: () => 0 });
    running.watches.push(watch);
    watch.onStatus(() => {
      throw new Error('router listener bug');
    });
    await watch.ready;
    expect(script.asked).toEqual(['GET /routers/watch']);
    expect(watch.status).toMatchObject({ server: url, transport: 'sse', complete: true, revision: '2-0' });
    expect(logs.lines.filter((line) => line.msg === 'a router watch listener threw')).not.toHaveLength(0);
  });

  it('is ready, and disconnected, once closed before any list came', async () => {
    const { url } = await replica(() => undefined);
    const { watch } = follow([url]);
    await watch.close();
    await watch.ready;
    expect(watch.status.transport).toBe('disconnected');
    expect(watch.pools.size).toBe(0);
  });
});
