// The parser of `poolscope serve` flags (CONTRACT.md §6): argv plus POOLSCOPE_* env variables, checked
// against the flag table (flag-table.ts) and the rules between flags, into a ServeConfig.
import { DEFAULT_CONFIG, type ServeConfig } from './config.js';
import { SERVE_FLAGS, envName, formatSecs, quote, type FlagSpec } from './flag-table.js';

export type ServeFlagsResult =
  | { ok: true; config: ServeConfig }
  | { ok: false; flag: string; message: string };

type Refusal = Extract<ServeFlagsResult, { ok: false }>;

const FLAGS_BY_NAME = new Map(SERVE_FLAGS.map((spec) => [spec.name, spec]));

/**
 * Parses `poolscope serve` flags. A flag on the command line wins over its env variable; only the
 * value that wins is validated. No I/O beyond checking that the TLS and token files are readable.
 */
export function parseServeFlags(argv: string[], env: Record<string, string | undefined>): ServeFlagsResult {
  const commandLine = readCommandLine(argv);
  if ('flag' in commandLine) return commandLine;

  const draft: ServeConfig = { ...DEFAULT_CONFIG, listen: { ...DEFAULT_CONFIG.listen } };
  // Where each value came from, appended to a refusal so an operator finds a stray env variable.
  const origins = new Map<FlagSpec, string>();
  for (const spec of SERVE_FLAGS) {
    const fromArgv = commandLine.get(spec);
    const fromEnv = env[envName(spec)];
    const value = fromArgv ?? fromEnv;
    if (value === undefined) continue;
    const origin = fromArgv === undefined ? ` (from ${envName(spec)})` : '';
    origins.set(spec, origin);
    if (value === '') return refuse(spec.name, `must not be empty${origin}`);
    const broken = spec.apply(value, draft);
    if (broken !== undefined) return refuse(spec.name, broken + origin);
  }
  return checkModeGroups(draft, origins) ?? checkCombinations(draft) ?? { ok: true, config: draft };
}

/** The values given on the command line, or the first malformed argument. */
function readCommandLine(argv: string[]): Map<FlagSpec, string> | Refusal {
  const values = new Map<FlagSpec, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      if (arg.startsWith('-')) return refuseRaw(arg, 'unknown flag (poolscope serve --help lists the flags)');
      return refuseRaw(arg, 'unexpected argument: serve takes only --flags');
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const spec = FLAGS_BY_NAME.get(name);
    if (spec === undefined) return refuseRaw(`--${name}`, 'unknown flag (poolscope serve --help lists the flags)');
    if (values.has(spec)) return refuse(name, 'given more than once');
    if (eq !== -1) {
      values.set(spec, arg.slice(eq + 1));
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined) return refuse(name, 'needs a value');
    // Never take the next flag as this one's value: a forgotten value must not silently eat a flag.
    if (next.startsWith('-')) {
      return refuse(name, `needs a value (a value starting with '-' must be written --${name}=VALUE)`);
    }
    values.set(spec, next);
    i++;
  }
  return values;
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

function refuse(name: string, message: string): Refusal {
  return { ok: false, flag: `--${name}`, message };
}

/** For an argument that is not a known flag: it is echoed, so escape anything that would break the line. */
function refuseRaw(arg: string, message: string): Refusal {
  const printable = /^[\x21-\x7e]*$/.test(arg) && arg !== '' ? arg : quote(arg);
  return { ok: false, flag: printable, message };
}
