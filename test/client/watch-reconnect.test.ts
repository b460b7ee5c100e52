// How watchPools() and watchRouters() reconnect (src/client/watch-pools.ts): resuming after the last
// revision applied and from scratch after a refused event, readiness only on a list, a stream that never
// gave a list counted as a failure, and closing mid-stream or mid-poll; the routers' events. Against a
// replica the test scripts (scripted-replica.ts), whose streams the test holds and writes.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { watchRouters } from '../../src/client/index.js';
import { eventually, waitFor } from '../support/wait.js';
import { delay, FAILED, follow, json, notSse, pool, poolList, replica, running, serving, stopAll } from './scripted-replica.js';

afterEach(stopAll);

describe('reconnecting', () => {
  /** A replica whose every stream the test holds: each request's Last-Event-ID, and the stream. */
  async function held(list: unknown) {
    const streams: { lastEventId: string | undefined; res: ServerResponse }[] = [];
    const r = await replica((req, res) => {
      if (req.url !== '/pools/watch') return json(200, list)(req, res);
      streams.push({ lastEventId: req.headers['last-event-id'] as string | undefined, res });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    return { ...r, streams };
  }
  const upsertFrame = (revision: string, model = 'm2') => `event: upsert\ndata: ${JSON.stringify({ revision, pool: { ...pool, model } })}\n\n`;
  const resyncFrame = (list: unknown) => `event: resync\ndata: ${JSON.stringify(list)}\n\n`;

  it('resumes after the last revision applied, complete as the list was; after a refused event, from scratch', async () => {
    const { url, streams } = await held(poolList);
    const { watch, statuses } = follow([url]);
    await waitFor(() => streams[0]);
    streams[0]!.res.write(resyncFrame(poolList) + upsertFrame('6-0'));
    await waitFor(() => watch.status.revision === '6-0');
    streams[0]!.res.end('event: closing\ndata: draining\n\n');
    await waitFor(() => streams[1]);
    expect(streams.map((s) => s.lastEventId)).toEqual([undefined, '6-0']);
    streams[1]!.res.write(': resumed\n\n');
    // Resumed: no resync comes, so the status is as the last list had it, complete.
    await eventually(() => expect(statuses.at(-1)).toMatchObject({ transport: 'sse', complete: true, revision: '6-0' }));
    streams[1]!.res.write('event: upsert\ndata: {"revision":\n\n');
    await waitFor(() => streams[2]);
    expect(streams[2]!.lastEventId).toBeUndefined();
  });

  it('is not ready on an upsert: only a list makes it ready', async () => {
    const { url, streams } = await held(poolList);
    const { watch } = follow([url]);
    await waitFor(() => streams[0]);
    streams[0]!.res.write(upsertFrame('6-0'));
    await waitFor(() => watch.pools.size === 1);
    const ready = await Promise.race([watch.ready.then(() => 'ready'), delay(200).then(() => 'waiting')]);
    expect(ready).toBe('waiting');
    streams[0]!.res.write(resyncFrame(poolList));
    await watch.ready;
  });

  it('counts a stream that ended without ever giving a list as a failure, though it lasted', async () => {
    const { url, streams } = await held(poolList);
    const { watch, lines } = follow([url]);
    await waitFor(() => streams[0]);
    streams[0]!.res.write(upsertFrame('6-0'));
    await waitFor(() => watch.pools.size === 1);
    await delay(1100);
    streams[0]!.res.end();
    await waitFor(() => lines(FAILED).length > 0);
    expect(lines('watch stream ended')[0]).toMatchObject({ level: 30, server: url, reason: 'the server ended the stream' });
  });

  it('on close: disconnected and incomplete, with no failure and no ended stream logged', async () => {
    const { url, streams } = await held(poolList);
    const { watch, lines, statuses } = follow([url]);
    await waitFor(() => streams[0]);
    streams[0]!.res.write(resyncFrame(poolList));
    await watch.ready;
    await watch.close();
    expect(watch.status).toMatchObject({ transport: 'disconnected', complete: false, failure: undefined });
    expect(statuses.at(-1)).toMatchObject({ transport: 'disconnected', complete: false });
    expect(lines(FAILED)).toEqual([]);
    expect(lines('watch stream ended')).toEqual([]);
  });

  it('on close while polling: no failure logged for the poll it cut', async () => {
    let polls = 0;
    const { url } = await replica((req, res) => {
      if (req.url === '/pools/watch') return notSse(req, res);
      // The first poll answers; the next ones hang until the watch closes.
      if (polls++ === 0) json(200, poolList)(req, res);
    });
    const { watch, lines } = follow([url], { sseRetryIntervalMs: 60_000 });
    await watch.ready;
    await waitFor(() => polls >= 2);
    await watch.close();
    expect(lines(FAILED)).toEqual([]);
    expect(watch.status.failure).toBeUndefined();
  });
});

describe('the router watch', () => {
  it('applies upserts and deletes of routers', async () => {
    const router = { id: 'r1', url: 'http://127.0.0.1:9000', source: 'registration' };
    let stream: ServerResponse | undefined;
    const { url } = await replica((req, res) => {
      stream = res;
      serving({ complete: true, revision: '1-0', routers: [] })(req, res);
    });
    const watch = watchRouters({ servers: [url], random: () => 0 });
    running.watches.push(watch);
    await watch.ready;
    stream!.write(`event: upsert\ndata: ${JSON.stringify({ revision: '2-0', router })}\n\n`);
    await waitFor(() => watch.routers.size === 1);
    expect(watch.routers.get('r1')).toStrictEqual(router);
    stream!.write(`event: delete\ndata: ${JSON.stringify({ revision: '3-0', router: { id: 'r1' } })}\n\n`);
    await waitFor(() => watch.status.revision === '3-0');
    expect(watch.routers.size).toBe(0);
  });
});
