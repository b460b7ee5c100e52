// A fake poolscope replica with regions configured (docs/contract.md §7), for the router client and
// `poolscope pools` tests: GET /pools answers the list it is given, GET /pools/watch streams a `resync` of
// it on connect and on every publish() (or, in `poll` mode, answers 404 so the client polls GET /pools).
import { createServer, type ServerResponse } from 'node:http';
import type { ListedPool, PoolList, RegionStatus } from '../../src/contract/index.js';
import { listenOnFreePort } from '../support/loopback-server.js';

export interface RegionsServer {
  url: string;
  /** What GET /pools answers and each new stream's first `resync` carries. */
  readonly list: PoolList;
  /** Replaces the list and sends it as a `resync` to every open watch stream. */
  publish(list: PoolList): void;
  /** GET /pools requests seen. */
  readonly polls: number;
  stop(): Promise<void>;
}

/** `sse`: the watch stream works; `poll`: GET /pools/watch answers 404 text/plain (no event stream). */
export async function startRegionsServer(initial: PoolList, mode: 'sse' | 'poll' = 'sse'): Promise<RegionsServer> {
  const streams = new Set<ServerResponse>();
  let list = initial;
  let polls = 0;
  const resync = (res: ServerResponse) => res.write(`event: resync\nid: ${list.revision}\ndata: ${JSON.stringify(list)}\n\n`);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === '/pools') {
      polls += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(list));
    } else if (req.method === 'GET' && path === '/pools/watch' && mode === 'sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streams.add(res);
      res.on('close', () => streams.delete(res));
      resync(res);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  const listening = await listenOnFreePort(server);
  return {
    url: listening.url,
    get list() {
      return list;
    },
    get polls() {
      return polls;
    },
    publish(next) {
      list = next;
      for (const res of streams) resync(res);
    },
    stop: listening.stop,
  };
}

/** A listed pool in cluster `c1`, namespace `llm`, with the given lease regions (none: no regions). */
export function regionPool(name: string, leaseRegions: string[] | undefined, overrides: Partial<ListedPool> = {}): ListedPool {
  return {
    cluster_id: 'c1',
    namespace: 'llm',
    name,
    model: 'm1',
    capabilities: ['chat'],
    capacity: [{ name: 'gpus', value: 8 }],
    location: { region: 'us-east-1' },
    relays: [],
    frontends: ['http://10.0.0.7:8000'],
    state: 'live',
    ...(leaseRegions === undefined ? {} : { lease_regions: leaseRegions }),
    ...overrides,
  };
}

export const REGION_SINCE = '2025-01-01T00:00:00.000Z';

/** A region's entry: `ok` (complete), `held` (unreachable, pools kept) or `dropped` (its pools left). */
export function region(name: string, how: 'ok' | 'held' | 'dropped'): RegionStatus {
  if (how === 'ok') return { name, complete: true, dropped: false };
  return { name, complete: false, reason: 'connect ETIMEDOUT', unreachable_since: REGION_SINCE, dropped: how === 'dropped' };
}
