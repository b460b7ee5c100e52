// The parser of `poolscope serve` flags (docs/contract.md §6, regions §7): argv plus POOLSCOPE_SERVE_* env
// variables (and POOLSCOPE_LOG_LEVEL), checked against the flag table (flag-table.ts) and the rules
// between flags, into a ServeConfig.
import { DEFAULT_CONFIG, type ServeConfig } from '../service/config.js';
import { parseFlags, refuse, type Refusal } from './flag-parser.js';
import { SERVE_FLAGS, quote, type FlagSpec } from './flag-table.js';
import { formatSecs } from './flag-values.js';
import { isKeyOf, readCertificateFile, readPrivateKeyFile } from './tls-files.js';

export type ServeFlagsResult = { ok: true; config: ServeConfig } | Refusal;

/**
 * Parses `poolscope serve` flags. A flag on the command line wins over its env variable; only the
 * value that wins is validated. No I/O beyond reading and checking the TLS, token and regions files.
 */
export function parseServeFlags(argv: string[], env: Record<string, string | undefined>): ServeFlagsResult {
  const draft: ServeConfig = { ...DEFAULT_CONFIG, listen: { ...DEFAULT_CONFIG.listen }, regions: [] };
  const parsed = parseFlags(argv, { command: 'serve', flags: SERVE_FLAGS, draft, env });
  if (!parsed.ok) return parsed;
  // Where each value came from is appended to a refusal, so an operator finds a stray env variable.
  // Regions first: they make the storage redis, which the mode-group rule then reads.
  const refusal = checkRegions(draft, parsed.origins) ?? checkModeGroups(draft, parsed.origins) ?? checkCombinations(draft);
  return refusal ?? { ok: true, config: draft };
}

/**
 * `--region` and `--regions-file` together (docs/contract.md §7). With them the storage is redis, each
 * region's Redis comes from the file (so `--redis-url` and `--redis-prefix` are refused), and the hold
 * defaults to four leases. Fills in `registrationStorage` and `regionHoldMs`.
 */
function checkRegions(config: ServeConfig, origins: Map<FlagSpec, string>): Refusal | undefined {
  /** Where the flag's value came from ('' or ` (from ENV)`), undefined when it was not given. */
  const given = (name: string) => origins.get(SERVE_FLAGS.find((spec) => spec.name === name)!);
  const hasRegion = config.region !== undefined;
  // A regions file that was read names at least one region.
  const hasFile = config.regions.length > 0;
  if (!hasRegion && !hasFile) {
    const hold = given('region-hold-secs');
    if (hold === undefined) return undefined;
    return refuse('region-hold-secs', `only applies with --region and --regions-file (no regions configured)${hold}`);
  }
  if (!hasFile) return refuse('regions-file', `required with --region${given('region')}`);
  if (!hasRegion) return refuse('region', `required with --regions-file${given('regions-file')}`);
  const names = config.regions.map((region) => region.name);
  if (!names.includes(config.region!)) {
    return refuse('region', `must be a region of --regions-file: ${names.join(', ')} (got ${quote(config.region!)})${given('region')}`);
  }
  const storage = given('registration-storage');
  if (storage !== undefined && config.registrationStorage !== 'redis') {
    return refuse(
      'registration-storage',
      `must be redis with --region and --regions-file (got ${quote(config.registrationStorage)})${storage}`,
    );
  }
  for (const [name, key] of [['redis-url', 'redis_url'], ['redis-prefix', 'prefix']] as const) {
    const origin = given(name);
    if (origin !== undefined) {
      return refuse(name, `not allowed with --region and --regions-file: each region's ${key} is in the regions file${origin}`);
    }
  }
  config.registrationStorage = 'redis';
  config.regionHoldMs ??= 4 * config.leaseMs;
  return undefined;
}

/** A flag of the redis or mcs group, set to anything but its default, outside its mode fails. */
function checkModeGroups(config: ServeConfig, origins: Map<FlagSpec, string>): Refusal | undefined {
  for (const spec of SERVE_FLAGS) {
    if (Object.is(config[spec.field], DEFAULT_CONFIG[spec.field])) continue;
    const origin = origins.get(spec) ?? '';
    if (spec.group === 'redis' && config.registrationStorage !== 'redis') {
      return refuse(
        spec.name,
        `only applies with --registration-storage redis (storage is ${config.registrationStorage})${origin}`,
      );
    }
    if (spec.group === 'mcs' && config.poolDiscovery === 'registrations') {
      return refuse(spec.name, `only applies with --pool-discovery mcs or karmada (discovery is registrations)${origin}`);
    }
  }
  return undefined;
}

/** Rules between flags; each refusal names the flag that depends on the other. */
function checkCombinations(config: ServeConfig): Refusal | undefined {
  if (config.registrationStorage === 'redis' && config.redisUrl === undefined && config.regions.length === 0) {
    return refuse('redis-url', 'required by --registration-storage redis');
  }
  if (config.tlsCertPath !== undefined && config.tlsKeyPath === undefined) {
    return refuse('tls-key-path', 'required with --tls-cert-path');
  }
  if (config.tlsKeyPath !== undefined && config.tlsCertPath === undefined) {
    return refuse('tls-cert-path', 'required with --tls-key-path');
  }
  const tlsPair = checkTlsPair(config);
  if (tlsPair !== undefined) return tlsPair;
  if (config.tlsClientCaPath !== undefined && config.tlsCertPath === undefined) {
    return refuse('tls-client-ca-path', 'requires --tls-cert-path and --tls-key-path (client certificates are checked over HTTPS)');
  }
  if (config.tlsClientScopesFile !== undefined && config.tlsClientCaPath === undefined) {
    return refuse('tls-client-scopes-file', 'requires --tls-client-ca-path (the scopes are those of client certificates)');
  }
  if (config.readTokenFile !== undefined && config.authTokenFile === undefined) {
    return refuse('read-token-file', 'requires --auth-token-file (else POST /pools would stay open while reads are guarded)');
  }
  if (config.heartbeatIntervalMs >= config.leaseMs) {
    return refuse(
      'heartbeat-interval-secs',
      `must be less than --lease-duration-secs (${formatSecs(config.leaseMs)})`,
    );
  }
  const relay = config.relayServiceSuffix;
  const frontend = config.frontendServiceSuffix;
  if (relay === frontend) {
    return refuse('frontend-service-suffix', `must differ from --relay-service-suffix (${quote(relay)})`);
  }
  // One suffix ending the other would make a PoolRelay Service look like a frontend one, or the reverse.
  if (frontend.endsWith(relay)) {
    return refuse('frontend-service-suffix', `must not end with --relay-service-suffix (${quote(relay)})`);
  }
  if (relay.endsWith(frontend)) {
    return refuse('frontend-service-suffix', `must not be the end of --relay-service-suffix (${quote(relay)})`);
  }
  return undefined;
}

/** The key of --tls-key-path must be the one of --tls-cert-path's certificate (both were read and parsed). */
function checkTlsPair(config: ServeConfig): Refusal | undefined {
  if (config.tlsCertPath === undefined || config.tlsKeyPath === undefined) return undefined;
  const certificate = readCertificateFile(config.tlsCertPath);
  if (typeof certificate === 'string') return refuse('tls-cert-path', certificate);
  const key = readPrivateKeyFile(config.tlsKeyPath);
  if (typeof key === 'string') return refuse('tls-key-path', key);
  if (isKeyOf(certificate, key)) return undefined;
  return refuse('tls-key-path', `${quote(config.tlsKeyPath)} is not the private key of the certificate in ${quote(config.tlsCertPath)} (--tls-cert-path)`);
}
