// The flags of `poolscope serve` (docs/contract.md §6, regions §7) as data: name, group, help text, and
// the rule each value must meet. The parser (flags.ts), `--help` (help.ts) and README's table
// (flag-docs.ts) all read this one table; each flag's environment name is POOLSCOPE_SERVE_<FLAG>
// (env-names.ts), `--log-level` the shared POOLSCOPE_LOG_LEVEL.
import { MAX_TIMER_MS, parseStaticRouter, POOL_DISCOVERIES, redisPrefixProblem, regionNameSchema, type PoolDiscovery } from '../contract/index.js';
import { DEFAULT_CONFIG, type RegistrationStorage, type ServeConfig } from '../service/config.js';
import { parseRedisUrl, RedisUrlError } from '../store/redis/url.js';
import { quote, type FlagDef } from './flag-parser.js';
import { logLevelFlag } from './log-level.js';
import { checkContent, checkServiceSuffix, formatListen, formatSecs, isOneOf, mustBeOneOf, parseListen, parseSecsAsMs, type FileContent } from './flag-values.js';
import { checkReadableFile, readRegionsFile } from './regions-file.js';

export { checkReadableFile, quote };

export type FlagGroup = 'general' | 'storage' | 'redis' | 'regions' | 'mcs' | 'tls-auth';

/** The headings of serve's groups in `--help` and README. */
export const GROUP_TITLES: Record<FlagGroup, string> = {
  general: 'General',
  storage: 'Registration storage',
  redis: 'Redis (only with --registration-storage redis)',
  regions: 'Regions, one Redis each (docs/contract.md §7; --region and --regions-file together, storage then redis)',
  mcs: 'Multi-Cluster Services (only with --pool-discovery mcs or karmada)',
  'tls-auth': 'TLS and auth',
};

export interface FlagSpec extends FlagDef<ServeConfig> {
  group: FlagGroup;
  /** Placeholder shown by `--help`, e.g. `SECS` (every serve flag takes a value). */
  valueName: string;
  /** The ServeConfig field the flag sets; the mode-group rule compares it with DEFAULT_CONFIG. */
  field: keyof ServeConfig;
}

const REGISTRATION_STORAGES: readonly RegistrationStorage[] = ['memory', 'redis'];
const REDIS_URL_SCHEMES = ['redis://', 'rediss://', 'redis+sentinel://', 'redis+cluster://', 'rediss+cluster://'];
const MAX_LEASE_MS = 86_400_000;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const SERVE_FLAGS: readonly FlagSpec[] = [
  {
    name: 'listen',
    group: 'general',
    valueName: 'HOST:PORT',
    summary: 'address to listen on, HOST:PORT; IPv6 in brackets, e.g. [::1]:8080',
    defaultText: formatListen(DEFAULT_CONFIG.listen),
    field: 'listen',
    apply(value, draft) {
      const listen = parseListen(value);
      if (typeof listen === 'string') return listen;
      draft.listen = listen;
      return undefined;
    },
  },
  {
    name: 'pool-discovery',
    group: 'general',
    valueName: 'MODE',
    summary: 'registrations (leases alone), mcs or karmada (leases joined with MCS EndpointSlices)',
    defaultText: DEFAULT_CONFIG.poolDiscovery,
    field: 'poolDiscovery',
    apply(value, draft) {
      if (!isOneOf(value, POOL_DISCOVERIES)) return mustBeOneOf(POOL_DISCOVERIES, value);
      draft.poolDiscovery = value;
      return undefined;
    },
  },
  {
    name: 'heartbeat-interval-secs',
    group: 'general',
    valueName: 'SECS',
    summary: 'how often PoolRelays are told to heartbeat; > 0 and < the lease (decimals allowed, e.g. 0.5)',
    defaultText: formatSecs(DEFAULT_CONFIG.heartbeatIntervalMs),
    field: 'heartbeatIntervalMs',
    apply(value, draft) {
      const ms = parseSecsAsMs(value);
      if (typeof ms === 'string') return ms;
      if (ms <= 0) return 'must be greater than 0';
      draft.heartbeatIntervalMs = ms;
      return undefined;
    },
  },
  {
    name: 'lease-duration-secs',
    group: 'general',
    valueName: 'SECS',
    summary: 'how long a registration stays live after its last heartbeat; > 0 and <= 86400 (decimals allowed)',
    defaultText: formatSecs(DEFAULT_CONFIG.leaseMs),
    field: 'leaseMs',
    apply(value, draft) {
      const ms = parseSecsAsMs(value);
      if (typeof ms === 'string') return ms;
      if (ms <= 0) return 'must be greater than 0';
      if (ms > MAX_LEASE_MS) return `must be at most ${formatSecs(MAX_LEASE_MS)}`;
      draft.leaseMs = ms;
      return undefined;
    },
  },
  {
    name: 'registration-storage',
    group: 'storage',
    valueName: 'STORAGE',
    summary: 'memory (one replica) or redis (any number of replicas sharing leases)',
    defaultText: DEFAULT_CONFIG.registrationStorage,
    field: 'registrationStorage',
    apply(value, draft) {
      if (!isOneOf(value, REGISTRATION_STORAGES)) return mustBeOneOf(REGISTRATION_STORAGES, value);
      draft.registrationStorage = value;
      return undefined;
    },
  },
  {
    name: 'redis-url',
    group: 'redis',
    valueName: 'URL',
    summary: `required with redis; ${REDIS_URL_SCHEMES.join(', ')}`,
    defaultText: undefined,
    field: 'redisUrl',
    apply(value, draft) {
      const scheme = REDIS_URL_SCHEMES.find((s) => value.startsWith(s));
      if (scheme === undefined) return `must start with ${REDIS_URL_SCHEMES.join(', ')}`;
      if (value.length === scheme.length) return `needs a host after ${scheme}`;
      if (/\s/.test(value)) return 'must not contain whitespace';
      // The whole URL now, not at connect time: a start-up failure is a refusal naming the flag.
      try {
        parseRedisUrl(value);
      } catch (error) {
        if (!(error instanceof RedisUrlError)) throw error;
        return error.message;
      }
      draft.redisUrl = value;
      return undefined;
    },
  },
  {
    name: 'redis-prefix',
    group: 'redis',
    valueName: 'PREFIX',
    summary: 'Redis key prefix, the hash tag {PREFIX} of every key; no {, } or whitespace',
    defaultText: DEFAULT_CONFIG.redisPrefix,
    field: 'redisPrefix',
    apply(value, draft) {
      const broken = redisPrefixProblem(value);
      if (broken === undefined) draft.redisPrefix = value;
      return broken;
    },
  },
  {
    name: 'redis-command-timeout-ms',
    group: 'redis',
    valueName: 'MS',
    summary: 'how long a Redis command may take before the store counts as unreachable; a positive integer',
    defaultText: String(DEFAULT_CONFIG.redisCommandTimeoutMs),
    field: 'redisCommandTimeoutMs',
    apply(value, draft) {
      if (!/^\d+$/.test(value) || Number(value) <= 0) return `must be a positive integer (got ${quote(value)})`;
      if (Number(value) > MAX_TIMER_MS) return `must be at most ${MAX_TIMER_MS}`;
      draft.redisCommandTimeoutMs = Number(value);
      return undefined;
    },
  },
  // Regions (docs/contract.md §7). After --redis-command-timeout-ms: a region's command_timeout_ms
  // defaults to it. The rules between these flags and the storage flags are in flags.ts.
  {
    name: 'region',
    group: 'regions',
    valueName: 'NAME',
    summary:
      "this replica's home region, a DNS-1123 label named in --regions-file (both or neither): POST /pools writes to its Redis only, and only its replicas log lapses there; storage is then redis, and --redis-url and --redis-prefix are refused",
    defaultText: undefined,
    field: 'region',
    apply(value, draft) {
      const name = regionNameSchema.safeParse(value);
      if (!name.success) return `${name.error.issues[0]?.message ?? 'must be a DNS-1123 label'} (got ${quote(value)})`;
      draft.region = value;
      return undefined;
    },
  },
  {
    name: 'regions-file',
    group: 'regions',
    valueName: 'PATH',
    summary: 'YAML or JSON, regions: {NAME: {redis_url, prefix?, command_timeout_ms?}}, one Redis per region; read at start',
    defaultText: undefined,
    field: 'regions',
    apply(value, draft) {
      const regions = readRegionsFile(value, draft.redisCommandTimeoutMs);
      if (typeof regions === 'string') return regions;
      draft.regions = regions;
      return undefined;
    },
  },
  {
    name: 'region-hold-secs',
    group: 'regions',
    valueName: 'SECS',
    summary: "how long an unreadable region's pools stay listed before they are dropped; > 0, decimals allowed (0.5)",
    defaultText: '4 x --lease-duration-secs',
    field: 'regionHoldMs',
    apply(value, draft) {
      const ms = parseSecsAsMs(value);
      if (typeof ms === 'string') return ms;
      if (ms <= 0) return 'must be greater than 0';
      if (ms > MAX_TIMER_MS) return `must be at most ${formatSecs(MAX_TIMER_MS)}`;
      draft.regionHoldMs = ms;
      return undefined;
    },
  },
  {
    name: 'relay-service-suffix',
    group: 'mcs',
    valueName: 'SUFFIX',
    summary:
      'a PoolRelay Service is named <pool><SUFFIX>: lowercase letters, digits and -; must differ from --frontend-service-suffix, neither ending the other; a leading - as --relay-service-suffix=-x',
    defaultText: DEFAULT_CONFIG.relayServiceSuffix,
    field: 'relayServiceSuffix',
    apply(value, draft) {
      const broken = checkServiceSuffix(value);
      if (broken === undefined) draft.relayServiceSuffix = value;
      return broken;
    },
  },
  {
    name: 'frontend-service-suffix',
    group: 'mcs',
    valueName: 'SUFFIX',
    summary: "a pool's frontend Service is named <pool><SUFFIX>: the same rules; a leading - as --frontend-service-suffix=-x",
    defaultText: DEFAULT_CONFIG.frontendServiceSuffix,
    field: 'frontendServiceSuffix',
    apply(value, draft) {
      const broken = checkServiceSuffix(value);
      if (broken === undefined) draft.frontendServiceSuffix = value;
      return broken;
    },
  },
  {
    name: 'frontend-port-name',
    group: 'mcs',
    valueName: 'NAME',
    summary: 'name of the frontend port in the frontend EndpointSlices',
    defaultText: DEFAULT_CONFIG.frontendPortName,
    field: 'frontendPortName',
    apply(value, draft) {
      if (!DNS_LABEL.test(value)) return `must be a port name: a DNS label of lowercase letters, digits and '-' (got ${quote(value)})`;
      draft.frontendPortName = value;
      return undefined;
    },
  },
  {
    name: 'namespace',
    group: 'mcs',
    valueName: 'NAMESPACE',
    summary: 'watch EndpointSlices of this namespace only',
    defaultText: 'all namespaces',
    field: 'namespace',
    apply(value, draft) {
      if (!DNS_LABEL.test(value)) return `must be a namespace name: a DNS label of lowercase letters, digits and '-' (got ${quote(value)})`;
      draft.namespace = value;
      return undefined;
    },
  },
  // Routers (docs/contract.md §10).
  {
    name: 'router',
    group: 'general',
    valueName: 'ID=URL',
    summary:
      'a router always listed by GET /routers, without a lease (any mode); repeatable; ID a DNS-1123 label, URL http(s) with a host; in the environment, several separated by spaces',
    defaultText: 'none',
    field: 'staticRouters',
    repeatable: true,
    apply(value, draft) {
      const router = parseStaticRouter(value);
      if (typeof router === 'string') return router;
      if (draft.staticRouters.some((r) => r.id === router.id)) return `the id ${quote(router.id)} is given twice`;
      // A new array each time: the draft starts from DEFAULT_CONFIG's.
      draft.staticRouters = [...draft.staticRouters, router];
      return undefined;
    },
  },
  {
    name: 'router-service-name',
    group: 'mcs',
    valueName: 'NAME',
    summary: "the imported Global Router Service: its Ready endpoints are routers (one per pod); a Service name, lowercase letters, digits and '-'",
    defaultText: DEFAULT_CONFIG.routerServiceName,
    field: 'routerServiceName',
    apply(value, draft) {
      if (!DNS_LABEL.test(value)) return `must be a Service name: a DNS label of lowercase letters, digits and '-' (got ${quote(value)})`;
      draft.routerServiceName = value;
      return undefined;
    },
  },
  {
    name: 'router-port-name',
    group: 'mcs',
    valueName: 'NAME',
    summary: "name of the routers' port in the Global Router Service's EndpointSlices (appProtocol https gives https:// URLs)",
    defaultText: DEFAULT_CONFIG.routerPortName,
    field: 'routerPortName',
    apply(value, draft) {
      if (!DNS_LABEL.test(value)) return `must be a port name: a DNS label of lowercase letters, digits and '-' (got ${quote(value)})`;
      draft.routerPortName = value;
      return undefined;
    },
  },
  // Limits (docs/contract.md §8).
  countFlag('max-connections', 'maxConnections', 'a positive integer: connections open at once; beyond it a new connection is closed at once (README "Limits")'),
  countFlag('max-watchers', 'maxWatchers', 'a positive integer: event streams of each kind (GET /pools/watch, /debug/pools/watch) open at once; beyond it 503 too_many_watchers with Retry-After'),
  countFlag('watch-max-backlog-bytes', 'watchMaxBacklogBytes', 'a positive integer: bytes an event stream may have unsent before it is cut (a client that stopped reading)'),
  { ...logLevelFlag<ServeConfig>(), group: 'general', valueName: 'LEVEL', field: 'logLevel' },
  pathFlag('tls-cert-path', 'tlsCertPath', 'PEM certificate to serve HTTPS with, then its chain; needs --tls-key-path', 'certificate'),
  pathFlag('tls-key-path', 'tlsKeyPath', "PEM private key of --tls-cert-path's certificate, unencrypted; needs --tls-cert-path", 'key'),
  pathFlag('tls-client-ca-path', 'tlsClientCaPath', 'PEM CA certificate(s): every client must present a certificate it signed (mutual TLS); needs --tls-cert-path', 'certificate'),
  pathFlag('tls-client-scopes-file', 'tlsClientScopesFile', 'what each client certificate may write, a line <CN or DNS name> [<scope>...] (README "Security"); re-read when it changes; needs --tls-client-ca-path', 'subject-scopes'),
  pathFlag('auth-token-file', 'authTokenFile', 'bearer tokens for POST /pools (and reads), a line <token> [<scope>...] (# comments; scopes: README "Security"); at least one, each of Bearer characters; re-read when it changes', 'write-tokens'),
  pathFlag('read-token-file', 'readTokenFile', 'bearer tokens for every route but POST /pools, /healthz and /readyz, one a line, the same rules; needs --auth-token-file', 'read-tokens'),
];

/** A positive whole number of the general group (a limit). */
function countFlag(name: string, field: 'maxConnections' | 'maxWatchers' | 'watchMaxBacklogBytes', summary: string): FlagSpec {
  return {
    name,
    group: 'general',
    valueName: 'N',
    summary,
    defaultText: String(DEFAULT_CONFIG[field]),
    field,
    apply(value, draft) {
      if (!/^\d+$/.test(value) || Number(value) <= 0) return `must be a positive integer (got ${quote(value)})`;
      if (!Number.isSafeInteger(Number(value))) return `must be at most ${Number.MAX_SAFE_INTEGER}`;
      draft[field] = Number(value);
      return undefined;
    },
  };
}

/**
 * A TLS/auth flag naming a file, read and checked at start: a token file must hold a token, each of Bearer
 * characters (docs/contract.md §8); a certificate file PEM certificates that parse; a key file an
 * unencrypted PEM private key. Whether the key is the certificate's is checked in flags.ts.
 */
function pathFlag(
  name: string,
  field: 'tlsCertPath' | 'tlsKeyPath' | 'tlsClientCaPath' | 'tlsClientScopesFile' | 'authTokenFile' | 'readTokenFile',
  summary: string,
  holds: FileContent,
): FlagSpec {
  return {
    name,
    group: 'tls-auth',
    valueName: 'PATH',
    summary,
    defaultText: undefined,
    field,
    apply(value, draft) {
      const broken = checkContent(value, holds);
      if (broken === undefined) draft[field] = value;
      return broken;
    },
  };
}
