// `--redis-url` forms, chosen by scheme:
//   redis://[user[:pass]@]host[:port][/db]                       one server (port 6379, db 0 by default)
//   rediss://…                                                   the same over TLS
//   redis+sentinel://[user[:pass]@]host1[:port],host2[:port]/<masterName>[/db]
//                                                                Sentinel (port 26379 by default); the
//                                                                credentials are the master's
//   rediss+sentinel://…                                          the same, TLS to master and sentinels
//   redis+cluster://[user[:pass]@]host1[:port],host2[:port]      Redis Cluster seed nodes (port 6379)
//   rediss+cluster://…                                           the same over TLS
// Hosts are names, IPv4 or bracketed IPv6 (`[::1]:6379`). User and password are percent-decoded, so a
// password holding `@`, `:`, `/` or `,` must be percent-encoded. Query strings are refused rather than
// ignored, so a setting that would be silently dropped fails at start instead.

export interface RedisAddress {
  host: string;
  port: number;
}

export interface RedisCredentials {
  username?: string;
  password?: string;
}

export type RedisTarget =
  | { kind: 'standalone'; address: RedisAddress; tls: boolean; db: number; credentials: RedisCredentials }
  | {
      kind: 'sentinel';
      sentinels: RedisAddress[];
      masterName: string;
      tls: boolean;
      db: number;
      credentials: RedisCredentials;
    }
  | { kind: 'cluster'; nodes: RedisAddress[]; tls: boolean; credentials: RedisCredentials };

const SCHEMES: Record<string, { kind: RedisTarget['kind']; tls: boolean; defaultPort: number }> = {
  redis: { kind: 'standalone', tls: false, defaultPort: 6379 },
  rediss: { kind: 'standalone', tls: true, defaultPort: 6379 },
  'redis+sentinel': { kind: 'sentinel', tls: false, defaultPort: 26379 },
  'rediss+sentinel': { kind: 'sentinel', tls: true, defaultPort: 26379 },
  'redis+cluster': { kind: 'cluster', tls: false, defaultPort: 6379 },
  'rediss+cluster': { kind: 'cluster', tls: true, defaultPort: 6379 },
};

export class RedisUrlError extends Error {
  override readonly name = 'RedisUrlError';
}

/** Parses a `--redis-url`. Errors name the URL with its password masked. */
export function parseRedisUrl(url: string): RedisTarget {
  const fail = (rule: string): never => {
    throw new RedisUrlError(`redis url ${redactRedisUrl(url)}: ${rule}`);
  };
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)([?#].*)?$/.exec(url);
  if (!match) return fail('must look like scheme://host:port (redis, rediss, redis+sentinel, redis+cluster)');
  const [, rawScheme = '', authority = '', path = '', rest] = match;
  const scheme = SCHEMES[rawScheme.toLowerCase()];
  if (!scheme) return fail(`unknown scheme "${rawScheme}" (use ${Object.keys(SCHEMES).join(', ')})`);
  if (rest !== undefined) return fail('query strings and fragments are not supported');

  const at = authority.lastIndexOf('@');
  const credentials = at === -1 ? {} : parseCredentials(authority.slice(0, at), fail);
  const hostList = at === -1 ? authority : authority.slice(at + 1);
  const addresses = hostList.split(',').map((host) => parseAddress(host, scheme.defaultPort, fail));
  const segments = path === '' || path === '/' ? [] : path.slice(1).split('/');

  switch (scheme.kind) {
    case 'standalone': {
      if (addresses.length !== 1) return fail('names one host (use redis+cluster:// or redis+sentinel:// for several)');
      if (segments.length > 1) return fail('path must be /<db>');
      return { kind: 'standalone', address: addresses[0]!, tls: scheme.tls, db: parseDb(segments[0], fail), credentials };
    }
    case 'sentinel': {
      const [masterName, db, ...extra] = segments;
      if (masterName === undefined || masterName === '') return fail('path must be /<masterName>[/<db>]');
      if (extra.length > 0) return fail('path must be /<masterName>[/<db>]');
      return {
        kind: 'sentinel',
        sentinels: addresses,
        masterName: decode(masterName, fail),
        tls: scheme.tls,
        db: parseDb(db, fail),
        credentials,
      };
    }
    case 'cluster': {
      if (segments.length > 0) return fail('a cluster has only db 0: no path allowed');
      return { kind: 'cluster', nodes: addresses, tls: scheme.tls, credentials };
    }
  }
}

/** The URL with its password replaced by `***`, for logs and errors. */
export function redactRedisUrl(url: string): string {
  return url.replace(/^([^:]+:\/\/[^:@/]*:)[^/]*@/, '$1***@');
}

/** A one-line description of where the store connects, without credentials. */
export function describeRedisTarget(target: RedisTarget): string {
  const hostPort = (a: RedisAddress) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
  const tls = target.tls ? ' (tls)' : '';
  switch (target.kind) {
    case 'standalone':
      return `redis ${hostPort(target.address)} db ${target.db}${tls}`;
    case 'sentinel':
      return `redis sentinel ${target.sentinels.map(hostPort).join(',')} master ${target.masterName} db ${target.db}${tls}`;
    case 'cluster':
      return `redis cluster ${target.nodes.map(hostPort).join(',')}${tls}`;
  }
}

type Fail = (rule: string) => never;

function parseCredentials(userinfo: string, fail: Fail): RedisCredentials {
  const colon = userinfo.indexOf(':');
  const username = decode(colon === -1 ? userinfo : userinfo.slice(0, colon), fail);
  const password = colon === -1 ? undefined : decode(userinfo.slice(colon + 1), fail);
  const credentials: RedisCredentials = {};
  if (username !== '') credentials.username = username;
  if (password !== undefined && password !== '') credentials.password = password;
  return credentials;
}

function parseAddress(text: string, defaultPort: number, fail: Fail): RedisAddress {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+))(?::([0-9]+))?$/.exec(text);
  if (!match) return fail(`"${text}" is not host[:port]`);
  const [, ipv6, name, portText] = match;
  const port = portText === undefined ? defaultPort : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return fail(`port ${portText} is not 1-65535`);
  return { host: ipv6 ?? name ?? '', port };
}

function parseDb(text: string | undefined, fail: Fail): number {
  if (text === undefined || text === '') return 0;
  if (!/^[0-9]{1,5}$/.test(text)) return fail(`db "${text}" is not a number`);
  return Number(text);
}

function decode(text: string, fail: Fail): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return fail('holds a malformed percent-encoding');
  }
}
