// The parser of `poolscope serve` flags (CONTRACT.md §6): argv plus POOLSCOPE_* env variables, checked
// against the flag table (flag-table.ts) and the rules between flags, into a ServeConfig.
import { DEFAULT_CONFIG, type ServeConfig } from '../service/config.js';
import { parseFlags, refuse, type Refusal } from './flag-parser.js';
import { SERVE_FLAGS, formatSecs, quote, type FlagSpec } from './flag-table.js';

export type ServeFlagsResult = { ok: true; config: ServeConfig } | Refusal;

/**
 * Parses `poolscope serve` flags. A flag on the command line wins over its env variable; only the
 * value that wins is validated. No I/O beyond checking that the TLS and token files are readable.
 */
export function parseServeFlags(argv: string[], env: Record<string, string | undefined>): ServeFlagsResult {
  const draft: ServeConfig = { ...DEFAULT_CONFIG, listen: { ...DEFAULT_CONFIG.listen } };
  const parsed = parseFlags(argv, { command: 'serve', flags: SERVE_FLAGS, draft, env });
  if (!parsed.ok) return parsed;
  // Where each value came from is appended to a refusal, so an operator finds a stray env variable.
  return checkModeGroups(draft, parsed.origins) ?? checkCombinations(draft) ?? { ok: true, config: draft };
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
  if (config.registrationStorage === 'redis' && config.redisUrl === undefined) {
    return refuse('redis-url', 'required by --registration-storage redis');
  }
  if (config.tlsCertPath !== undefined && config.tlsKeyPath === undefined) {
    return refuse('tls-key-path', 'required with --tls-cert-path');
  }
  if (config.tlsKeyPath !== undefined && config.tlsCertPath === undefined) {
    return refuse('tls-cert-path', 'required with --tls-key-path');
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
