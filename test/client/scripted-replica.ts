// A poolscope replica a test scripts, on loopback (each answer exact), and a watch that follows it with
// short timers, its status changes and log lines captured: for the tests of what watchPools() and
// watchRouters() tell their caller (watch-status) and how they reconnect (watch-reconnect).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { watchPools, type PoolWatch, type RouterWatch, type WatchPoolsOptions, type WatchStatus } from '../../src/client/index.js';
import { pool as listedPool } from '../support/listed-pool.js';
import { listenOnFreePort, type LoopbackServer } from '../support/loopback-server.js';
import { captureLogs } from '../support/logs.js';

export const pool = listedPool('p1');
export const region = (name: string) => ({ name, complete: true, dropped: false });
export const poolList = { complete: true, revision: '5-0', pools: [pool], regions: [region('eu'), region('us')] };

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What a test started: `stopAll()` (its afterEach) closes the watches, then the servers. */
export const running = { servers: [] as LoopbackServer[], watches: [] as (PoolWatch | RouterWatch)[] };
export async function stopAll(): Promise<void> {
  await Promise.all(running.watches.splice(0).map((watch) => watch.close()));
  await Promise.all(running.servers.splice(0).map((server) => server.stop()));
}

/** A replica whose answers `handler` gives; the handler can be swapped while the watch runs. */
export async function replica(handler: Handler) {
  const script = { handler, asked: [] as string[] };
  const server = await listenOnFreePort(
    createServer((req, res) => {
      script.asked.push(`${req.method} ${req.url}`);
      script.handler(req, res);
    }),
  );
  running.servers.push(server);
  return { url: server.url, script };
}

export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
/** GET <path>/watch as an event stream starting with `resync` of `list` (held open); GET <path> as `list`. */
export const serving =
  (list: unknown): Handler =>
  (req, res) => {
    if (req.url?.endsWith('/watch')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: resync\ndata: ${JSON.stringify(list)}\n\n`);
      return;
    }
    json(200, list)(req, res);
  };
/** A reply to GET /pools/watch that is no event stream (as a buffering proxy's may be). */
export const notSse = json(200, { not: 'a stream' });

export function follow(urls: string[], options: Partial<WatchPoolsOptions> = {}) {
  const logs = captureLogs();
  const statuses: WatchStatus[] = [];
  const watch = watchPools({ servers: urls, logger: logs.logger, random: () => 0, backoff: { initialMs: 20, maxMs: 40 }, pollIntervalMs: 30, ...options });
  running.watches.push(watch);
  watch.onStatus((status) => statuses.push(status));
  return { watch, logs, statuses, lines: (msg: string) => logs.lines.filter((line) => line.msg === msg) };
}

export const FAILED = 'poolscope replica failed; trying the next';
export const POLLING = 'event stream unavailable; polling GET /pools';
/** A window a test must let pass (the one-second rule of a stream that worked, a backoff counted). */
export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
