// The flags of `poolscope relay`: the replicas, and the registration from a JSON/YAML file, from flags,
// or both (a flag overrides the file's field). The registration is checked against the contract before
// the relay starts; a refusal names the flag, or the file and the field.
import type { RegistrationInput } from '../../contract/index.js';
import { readRegistrationFile, RegistrationFileError } from '../../relay/registration-file.js';
import { RegistrationError, validateRegistration } from '../../relay/registration.js';
import { parseFlags, refuse, type FlagDef, type Refusal } from '../flag-parser.js';
import { DEFAULT_LOG_LEVEL, logLevelFlag, type LogLevel } from '../log-level.js';
import { checkClientFlags, clientDefaults, clientFlags, fallbackServersFlag, type ClientDraft, type FallbackDraft } from './client-flags.js';

export interface RelayDraft extends FallbackDraft {
  registrationFile: string | undefined;
  /** Registration fields given as flags, by field name. */
  fields: Record<string, unknown>;
  location: { region?: string; zone?: string };
  requestTimeoutMs: number | undefined;
  logLevel: LogLevel;
}

export interface RelayConfig extends ClientDraft {
  /** Replicas of other regions (docs/contract.md §7); empty for none. */
  fallbackServers: string[];
  registration: RegistrationInput;
  requestTimeoutMs: number | undefined;
  logLevel: LogLevel;
}

/** A registration field set by a flag. `parse` turns the text into the field's value (lists, numbers). */
function fieldFlag(name: string, field: string, valueName: string, summary: string, parse: (value: string) => unknown = (v) => v): FlagDef<RelayDraft> {
  return {
    name,
    valueName,
    summary,
    defaultText: undefined,
    apply(value, draft) {
      draft.fields[field] = parse(value);
      return undefined;
    },
  };
}

const list = (value: string) => value.split(',');

/** `gpus=8,memory_gib=640` → capacity items; a value that is no number stays text, for the schema to refuse. */
function capacityList(value: string): unknown[] {
  return value.split(',').map((item) => {
    const eq = item.lastIndexOf('=');
    if (eq === -1) return { name: item };
    const text = item.slice(eq + 1);
    const number = Number(text);
    return { name: item.slice(0, eq), value: text.trim() === '' || Number.isNaN(number) ? text : number };
  });
}

/** Which flag sets each registration field, for refusals. */
const FIELD_FLAGS: Record<string, string> = {
  cluster_id: 'cluster-id',
  namespace: 'namespace',
  name: 'name',
  model: 'model',
  capabilities: 'capabilities',
  capacity: 'capacity',
  location: 'region',
  frontends: 'frontends',
  relay: 'relay-url',
};

export const RELAY_FLAGS: readonly FlagDef<RelayDraft>[] = [
  ...clientFlags<RelayDraft>(),
  fallbackServersFlag<RelayDraft>(),
  {
    name: 'registration-file',
    valueName: 'PATH',
    summary: 'the registration as JSON (.json) or YAML (any other name), the body of POST /pools',
    defaultText: undefined,
    apply(value, draft) {
      draft.registrationFile = value;
      return undefined;
    },
  },
  fieldFlag('cluster-id', 'cluster_id', 'ID', "the pool's cluster (its MCS cluster name in mcs/karmada modes)"),
  fieldFlag('namespace', 'namespace', 'NAMESPACE', "the pool's namespace"),
  fieldFlag('name', 'name', 'NAME', "the pool's name"),
  fieldFlag('model', 'model', 'MODEL', 'the model the pool serves'),
  fieldFlag('capabilities', 'capabilities', 'CAP[,CAP...]', 'capabilities, comma-separated', list),
  fieldFlag('capacity', 'capacity', 'NAME=NUMBER[,...]', 'capacity, e.g. gpus=8,memory_gib=640', capacityList),
  {
    name: 'region',
    valueName: 'REGION',
    summary: "the pool's region (location.region)",
    defaultText: undefined,
    apply(value, draft) {
      draft.location.region = value;
      return undefined;
    },
  },
  {
    name: 'zone',
    valueName: 'ZONE',
    summary: "the pool's zone (location.zone)",
    defaultText: undefined,
    apply(value, draft) {
      draft.location.zone = value;
      return undefined;
    },
  },
  fieldFlag('frontends', 'frontends', 'URL[,URL...]', 'frontend URLs (registrations mode), comma-separated', list),
  fieldFlag('relay-url', 'relay', 'URL', "this relay's own URL, listed as the pool's relay (registrations mode)"),
  {
    name: 'request-timeout-ms',
    valueName: 'MS',
    summary: 'how long one heartbeat may take before the next replica is tried: an integer from 1 to 600000',
    defaultText: 'half the heartbeat interval, 250 to 5000',
    apply(value, draft) {
      if (!/^\d+$/.test(value) || Number(value) <= 0 || Number(value) > 600_000) return 'must be an integer from 1 to 600000';
      draft.requestTimeoutMs = Number(value);
      return undefined;
    },
  },
  logLevelFlag<RelayDraft>(),
];

export type RelayFlagsResult = { ok: true; config: RelayConfig } | Refusal;

/** Parses the flags, reads the registration file, and checks the registration against the contract. */
export async function parseRelayFlags(argv: string[], env: Record<string, string | undefined>): Promise<RelayFlagsResult> {
  const draft: RelayDraft = {
    ...clientDefaults(),
    fallbackServers: [],
    registrationFile: undefined,
    fields: {},
    location: {},
    requestTimeoutMs: undefined,
    logLevel: DEFAULT_LOG_LEVEL,
  };
  const parsed = parseFlags(argv, { command: 'relay', flags: RELAY_FLAGS, draft, env });
  if (!parsed.ok) return parsed;
  const clientRefusal = checkClientFlags(draft);
  if (clientRefusal !== undefined) return clientRefusal;

  let fromFile: Record<string, unknown> = {};
  if (draft.registrationFile !== undefined) {
    try {
      fromFile = await readRegistrationFile(draft.registrationFile);
    } catch (error) {
      if (error instanceof RegistrationFileError) return refuse('registration-file', error.message);
      throw error;
    }
  }
  const registration: Record<string, unknown> = { ...fromFile, ...draft.fields };
  if (draft.location.region !== undefined || draft.location.zone !== undefined) {
    const fileLocation = fromFile.location;
    registration.location = { ...(isObject(fileLocation) ? fileLocation : {}), ...draft.location };
  }
  try {
    validateRegistration(registration);
  } catch (error) {
    if (!(error instanceof RegistrationError)) throw error;
    return refuseRegistration(error, { registration, fromFlags: draft, file: draft.registrationFile });
  }
  return {
    ok: true,
    config: {
      servers: draft.servers,
      fallbackServers: draft.fallbackServers ?? [],
      token: draft.token,
      tokenFile: draft.tokenFile,
      ca: draft.ca,
      cert: draft.cert,
      key: draft.key,
      registration: registration as RegistrationInput,
      requestTimeoutMs: draft.requestTimeoutMs,
      logLevel: draft.logLevel,
    },
  };
}

/** Names the flag that set the refused field, else the file (with the field), else the flag to add. */
function refuseRegistration(
  error: RegistrationError,
  context: { registration: Record<string, unknown>; fromFlags: RelayDraft; file: string | undefined },
): Refusal {
  const field = error.field;
  const top = field?.split('.')[0];
  const flagName = top === undefined ? undefined : FIELD_FLAGS[top];
  const setByFlag =
    top !== undefined && (top in context.fromFlags.fields || (top === 'location' && Object.keys(context.fromFlags.location).length > 0));
  if (flagName !== undefined && setByFlag) {
    const which = top === 'location' ? (field?.endsWith('zone') ? 'zone' : 'region') : flagName;
    return refuse(which, error.message);
  }
  const missing = top !== undefined && !(top in context.registration);
  if (missing && flagName !== undefined) {
    const where = context.file === undefined ? '' : ` or "${top}" in --registration-file`;
    return refuse(flagName, `${top}: required (give --${flagName}${where})`);
  }
  if (context.file !== undefined) return refuse('registration-file', `${JSON.stringify(context.file)}: ${error.message}`);
  return refuse(flagName ?? 'registration-file', error.message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
