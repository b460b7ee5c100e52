// The event loop of a replica with a large list while changes are served: `watchers` watch streams open
// (resumed with Last-Event-ID at the current revision, so none is sent the whole list), GET /pools asked
// over and over by a few clients (identity and gzip: each change makes both bodies anew), and a change
// POSTed `changes` times, each waited for on every stream. The replica's loop delay over that window
// (bench/probes/loop-delay-hook.mjs) is the figure: no turn may hold the loop for the whole list.
import http from 'node:http';
import type { RunningReplica } from './new-replica.js';
import { postPool } from './http.js';
import type { LoopDelay } from './loop-delay.js';
import { benchRegistration } from './replicas.js';
import { WatchClients } from './watch-clients.js';

export interface ChangeStall {
  delay: LoopDelay;
  watchers: number;
  changes: number;
  /** GET /pools answered 200 during the window, by coding, and any other answer. */
  gets: { identity: number; gzip: number; failed: number };
  /** Change POSTed → the last stream received it (ms), per change. */
  fanOutMs: number[];
}

const GETTERS = 4;
const PAUSE_MS = 400;

export async function measureChangeStall(replica: RunningReplica, options: { watchers: number; changes: number }): Promise<ChangeStall> {
  const revision = await currentRevision(replica.url);
  const port = Number(new URL(replica.url).port);
  const clients = await WatchClients.open(port, options.watchers, 500, revision);
  const gets = { identity: 0, gzip: 0, failed: 0 };
  const fanOutMs: number[] = [];
  let stop = false;
  try {
    await replica.loopDelay(true);
    const getters = Array.from({ length: GETTERS }, async (_, i) => {
      const coding = i % 2 === 0 ? 'identity' : 'gzip';
      while (!stop) {
        const status = await drainGet(`${replica.url}/pools`, coding);
        if (status === 200) gets[coding] += 1;
        else gets.failed += 1;
      }
    });
    for (let i = 0; i < options.changes; i += 1) {
      const seen = clients.expect(`"name":"stall-${i}"`);
      const start = performance.now();
      await postPool(replica.url, JSON.stringify(benchRegistration('stall', i)));
      fanOutMs.push((await seen) - start);
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    stop = true;
    await Promise.all(getters);
    const delay = await replica.loopDelay(false);
    return { delay, watchers: clients.size, changes: options.changes, gets, fanOutMs };
  } finally {
    stop = true;
    clients.close();
  }
}

/** The revision of the list now, read from its ETag (`"<revision>.<digest>"`) without reading the body. */
async function currentRevision(url: string): Promise<string> {
  const response = await fetch(`${url}/pools`, { method: 'GET', headers: { 'accept-encoding': 'gzip' } });
  await response.arrayBuffer();
  const etag = response.headers.get('etag') ?? '';
  const revision = /^"([^.]+)\./.exec(etag)?.[1];
  if (!revision) throw new Error(`no revision in the ETag ${etag}`);
  return revision;
}

/** GET with one Accept-Encoding, the body read and dropped; resolves with the status (0 on an error). */
function drainGet(url: string, coding: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers: { 'accept-encoding': coding }, agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
      response.once('error', () => resolve(0));
    });
    request.once('error', () => resolve(0));
  });
}
