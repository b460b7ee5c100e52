// One store, one region (docs/contract.md §7): two regions of the regions file whose `redis_url`s name the
// same Redis server, database and key prefix would be one store read as two regions (every pool listed
// with both in `lease_regions`, swept twice). The file's own check compares the URLs as written; this one,
// at start, compares what they mean: host names resolved (every address, so `localhost` meets `127.0.0.1`
// and `::1`), host case and default ports and the default database (`/`, `/0`, none) folded, TLS or not
// alike. Two Sentinel URLs are the same store when they share a sentinel and name the same master; two
// Cluster URLs when they share a seed node. A host that does not resolve now is compared by its name
// (a remote region's DNS being down must not stop a replica from starting).
import { lookup } from 'node:dns/promises';
import { parseRedisUrl, type RedisAddress, type RedisTarget } from '../store/redis/url.js';
import type { RegionConfig } from './config.js';
import { StartupError } from './startup-error.js';

/** What a region's store is, folded: the server's endpoints (any one in common means the same server). */
interface StoreIdentity {
  region: string;
  /** `address|port` for each resolved address of each host. */
  endpoints: Set<string>;
  /** Everything else that must match: kind, database or master name, prefix. */
  scope: string;
  described: string;
}

/** Throws StartupError naming `--regions-file` when two regions resolve to the same store. */
export async function refuseSharedRegionStores(regions: readonly RegionConfig[]): Promise<void> {
  const identities = await Promise.all(regions.map((region) => identify(region)));
  for (let i = 0; i < identities.length; i += 1) {
    for (let j = 0; j < i; j += 1) {
      const [a, b] = [identities[j]!, identities[i]!];
      if (a.scope !== b.scope || ![...b.endpoints].some((endpoint) => a.endpoints.has(endpoint))) continue;
      throw new StartupError(
        '--regions-file',
        `regions.${b.region}.redis_url names the same store as region ${a.region} (${b.described}): each region needs its own Redis or prefix`,
      );
    }
  }
}

async function identify(region: RegionConfig): Promise<StoreIdentity> {
  const target = parseRedisUrl(region.redisUrl);
  const [addresses, scope] = storeScope(target);
  const endpoints = new Set<string>();
  for (const address of addresses) for (const resolved of await resolve(address.host)) endpoints.add(`${resolved}|${address.port}`);
  const described = `${scope.replace(/\|/g, ' ')} prefix ${region.prefix} at ${[...endpoints].map((e) => e.replace('|', ' port ')).join(', ')}`;
  return { region: region.name, endpoints, scope: `${scope}|${region.prefix}`, described };
}

/** The hosts to resolve and what else must match. */
function storeScope(target: RedisTarget): [RedisAddress[], string] {
  switch (target.kind) {
    case 'standalone':
      return [[target.address], `redis|db ${target.db}`];
    case 'sentinel':
      return [target.sentinels, `sentinel|master ${target.masterName}|db ${target.db}`];
    case 'cluster':
      return [target.nodes, 'cluster'];
  }
}

/** Every address of `host` (an address is itself), lower-cased; the name itself when it does not resolve. */
async function resolve(host: string): Promise<string[]> {
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    if (found.length > 0) return found.map((entry) => entry.address.toLowerCase());
  } catch {
    // Compared by name below.
  }
  return [host.toLowerCase()];
}
