// Regions on one machine for the regions benchmark (docs/contract.md §7): a private redis-server per
// region, its replicas as real `poolscope serve --region … --regions-file …` processes, and a WAN path for
// every follower connection to a remote region's Redis: one TCP proxy per (replica region, remote
// region) pair, adding a delay each way (test/support/tcp-proxy.ts, run in a process of its own:
// bench/lib/wan.ts). Each region's replicas get a regions file of their own: it lists the same regions,
// their own region's Redis directly and every remote one at the proxy of that pair. Optionally a tap
// (resp-tap.ts) sits in front of one pair's proxy to time the follower's commands.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegionStatus } from '../../src/contract/index.js';
import { startPoolscope, type PoolscopeProcess } from '../../test/support/process.js';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis-server.js';
import { waitFor } from '../../test/support/wait.js';
import { track } from './children.js';
import { cpuProfileArgs } from './replicas.js';
import { startWan, type WanProxy, type WanTap } from './wan.js';

export interface RegionSite {
  name: string;
  redis: PrivateRedis;
  replicas: PoolscopeProcess[];
  /** The proxy on this region's replicas' path to each remote region, by the remote region's name. */
  proxies: Map<string, WanProxy>;
  regionsFile: string;
}

export interface RegionsSetup {
  sites: RegionSite[];
  site(name: string): RegionSite;
  /** The tap in front of `tap.from`'s proxy to `tap.to`, when asked for. */
  tap: WanTap | undefined;
  stop(): Promise<void>;
}

export interface StartRegionsOptions {
  /** Replicas per region, by region name (the regions, in order). */
  replicas: Record<string, number>;
  /** Added by each proxy in each direction. */
  oneWayDelayMs: number;
  /** What each proxy carries at most, each way (bytes/s); unlimited when unset. */
  rateBytesPerSecond?: number;
  holdSecs: number;
  leaseSecs: number;
  /** Put a tap between `from`'s replicas and their proxy to `to`. */
  tap?: { from: string; to: string };
  /** How long every replica may take to answer complete (every region read) after it started. */
  readyTimeoutMs?: number;
}

export async function startRegions(options: StartRegionsOptions): Promise<RegionsSetup> {
  const names = Object.keys(options.replicas);
  const dir = await mkdtemp(join(tmpdir(), 'poolscope-bench-regions-'));
  const sites: RegionSite[] = [];
  const wan = await startWan();
  let tap: WanTap | undefined;
  const stop = async () => {
    await Promise.all(sites.flatMap((site) => site.replicas.map((replica) => replica.stop())));
    await wan.stop();
    await Promise.all(sites.map((site) => site.redis.stop()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const name of names) {
      sites.push({ name, redis: await startPrivateRedis(), replicas: [], proxies: new Map(), regionsFile: join(dir, `regions-${name}.json`) });
    }
    for (const site of sites) {
      const regions: Record<string, { redis_url: string; prefix: string }> = {};
      for (const remote of sites) {
        let port = remote.redis.port;
        if (remote !== site) {
          const proxy = await wan.proxy({ host: '127.0.0.1', port: remote.redis.port }, options.oneWayDelayMs, options.rateBytesPerSecond);
          site.proxies.set(remote.name, proxy);
          port = proxy.port;
          if (options.tap?.from === site.name && options.tap.to === remote.name) {
            tap = await wan.tap({ host: '127.0.0.1', port: proxy.port });
            port = tap.port;
          }
        }
        // The same store for every reader of a region: only the address differs between the files.
        regions[remote.name] = { redis_url: `redis://127.0.0.1:${port}`, prefix: `bench-${remote.name}` };
      }
      await writeFile(site.regionsFile, `${JSON.stringify({ regions }, null, 2)}\n`);
    }
    await seedEpochs(sites, options);
    for (const site of sites) {
      for (let i = 0; i < options.replicas[site.name]!; i += 1) site.replicas.push(await startRegionReplica(site, options));
    }
    const timeoutMs = options.readyTimeoutMs ?? 30_000;
    await Promise.all(
      sites.flatMap((site) =>
        site.replicas.map((replica) =>
          waitFor(async () => (await readRegionView(replica.url)).complete, { timeoutMs, intervalMs: 50, message: `${replica.url} complete in every region` }),
        ),
      ),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    sites,
    site(name) {
      const site = sites.find((s) => s.name === name);
      if (!site) throw new Error(`no region ${name}`);
      return site;
    },
    tap,
    stop,
  };
}

/**
 * A region's Redis gets its epoch (the id of its data lifetime) from its own replicas' first snapshot. A
 * follower that read a region before that (the regions' replicas start one after another here) reads no
 * epoch, sees one appear at its next snapshot and, as after a loss of data, holds that region incomplete
 * for a whole lease (docs/contract.md §7): right, but not what is measured here. So one replica per
 * region is started and stopped first, all at once, as in a deployment whose regions have all been up.
 */
async function seedEpochs(sites: RegionSite[], options: StartRegionsOptions): Promise<void> {
  await Promise.all(
    sites.map(async (site) => {
      const seed = await startRegionReplica(site, options);
      try {
        await waitFor(async () => (await readRegionView(seed.url)).regions.find((r) => r.name === site.name)?.complete, {
          timeoutMs: 30_000,
          intervalMs: 50,
          message: `${site.name}'s first replica to read its own region`,
        });
      } finally {
        await seed.stop();
      }
    }),
  );
}

export async function startRegionReplica(site: RegionSite, options: StartRegionsOptions): Promise<PoolscopeProcess> {
  const replica = await startPoolscope(
    [
      `--region=${site.name}`,
      `--regions-file=${site.regionsFile}`,
      `--region-hold-secs=${options.holdSecs}`,
      `--lease-duration-secs=${options.leaseSecs}`,
      `--heartbeat-interval-secs=${Math.max(1, Math.round(options.leaseSecs / 3))}`,
    ],
    // info: the replica logs each snapshot it applies (`store snapshot applied`, with read_ms), and each
    // region it stops and starts reading again; a handful of lines, nothing per request.
    { env: { POOLSCOPE_LOG_LEVEL: 'info' }, nodeArgs: cpuProfileArgs() },
  );
  track(replica.child);
  return replica;
}

export interface RegionView {
  complete: boolean;
  regions: RegionStatus[];
  /** Listed pools whose name starts with the prefix asked for (0 when none was). */
  count: number;
  bytes: number;
}

/**
 * GET /pools, read without parsing the whole list (a 10,000-pool body is MBs, and this process also
 * runs the proxies, whose timing a long parse would disturb): the top-level `complete`, the `regions`
 * entries (the body's last member) and how many pool names start with `namePrefix`.
 */
export function readRegionView(baseUrl: string, namePrefix?: string): Promise<RegionView> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${baseUrl}/pools`, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        if (response.statusCode !== 200) return reject(new Error(`GET ${baseUrl}/pools: ${response.statusCode}`));
        const body = Buffer.concat(chunks);
        try {
          resolve(viewOf(body, namePrefix));
        } catch (error) {
          reject(error);
        }
      });
    });
    request.on('error', reject);
  });
}

function viewOf(body: Buffer, namePrefix: string | undefined): RegionView {
  const regionsAt = body.lastIndexOf('"regions":[');
  if (regionsAt < 0) throw new Error('GET /pools carries no regions');
  const regions = JSON.parse(body.toString('utf8', regionsAt + '"regions":'.length, body.length - 1)) as RegionStatus[];
  const completeAt = body.indexOf('"complete":');
  const complete = body.toString('latin1', completeAt + '"complete":'.length, completeAt + '"complete":'.length + 4) === 'true';
  let count = 0;
  if (namePrefix !== undefined) {
    const needle = Buffer.from(`"name":"${namePrefix}`);
    for (let at = body.indexOf(needle); at >= 0; at = body.indexOf(needle, at + needle.length)) count += 1;
  }
  return { complete, regions, count, bytes: body.length };
}

/** Sequential PINGs to a Redis (or through a proxy to one) on a fresh connection: each round trip, ms. */
export function pingRoundTrips(port: number, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setNoDelay(true);
    const samples: number[] = [];
    let sentAt = 0;
    let reply = '';
    const ping = () => {
      reply = '';
      sentAt = performance.now();
      socket.write('PING\r\n');
    };
    socket.once('connect', ping);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (!reply.includes('\r\n')) return;
      if (!reply.startsWith('+PONG')) {
        socket.destroy();
        return reject(new Error(`PING through port ${port}: ${reply.trim()}`));
      }
      samples.push(performance.now() - sentAt);
      if (samples.length < count) return ping();
      socket.destroy();
      resolve(samples);
    });
  });
}
