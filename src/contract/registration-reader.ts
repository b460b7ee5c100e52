// The heartbeat's fast path (docs/design.md "Dependencies", the heartbeat path): one walk over a parsed
// body that checks every rule of registrationSchema and, as it goes, writes the registration zod would
// return and its canonical JSON (keys sorted at every depth, as canonicalJson writes them). It only ever
// accepts: a body it has any doubt about (a rule broken, a key it does not know, a type it does not
// expect) is left to registrationSchema, which refuses it with the contract's field and message, or
// accepts it after all. So the rules and the error bodies stay where they are (registration.ts); this
// file can only be faster.
import {
  DNS1123_SUBDOMAIN,
  HTTP_URL,
  MAX_LIST_ITEMS,
  MAX_MODEL_LENGTH,
  MAX_NAME_LENGTH,
  parsesAsHttpUrl,
  type Registration,
} from './registration.js';

/** A registration as registrationSchema.parse returns it, and its canonical JSON. */
export interface ReadRegistration {
  registration: Registration;
  json: string;
}

/** The registration's keys, as the schema knows them. */
const KEYS = new Set(['cluster_id', 'namespace', 'name', 'model', 'capabilities', 'capacity', 'location', 'frontends', 'relay']);

/** A valid registration and its canonical JSON, or undefined: then registrationSchema decides. */
export function readRegistration(body: unknown): ReadRegistration | undefined {
  if (!isRecord(body)) return undefined;
  for (const key of Object.keys(body)) if (!KEYS.has(key)) return undefined;
  const { cluster_id, namespace, name, model, capabilities = [], capacity = [], location = {}, frontends = [], relay } = body;
  if (!isDnsName(cluster_id) || !isDnsName(namespace) || !isDnsName(name)) return undefined;
  if (!isString(model, 1, MAX_MODEL_LENGTH)) return undefined;
  if (!isList(capabilities)) return undefined;
  for (const capability of capabilities) if (!isString(capability, 1, MAX_MODEL_LENGTH)) return undefined;
  if (!isList(capacity)) return undefined;
  let capacityJson = '[';
  const capacityItems: Registration['capacity'] = [];
  for (let i = 0; i < capacity.length; i += 1) {
    const item = capacity[i];
    if (!isRecord(item) || !hasOnlyKeys(item, 'name', 'value')) return undefined;
    const { name: itemName, value } = item;
    // Number.isFinite is false for anything but a finite number (it does not convert).
    if (!isString(itemName, 1, MAX_MODEL_LENGTH) || !Number.isFinite(value)) return undefined;
    capacityItems.push({ name: itemName, value: value as number });
    capacityJson += `${i === 0 ? '' : ','}{"name":${JSON.stringify(itemName)},"value":${JSON.stringify(value)}}`;
  }
  capacityJson += ']';
  if (!isRecord(location) || !hasOnlyKeys(location, 'region', 'zone')) return undefined;
  const { region, zone } = location;
  if ((region !== undefined && !isString(region, 0, MAX_NAME_LENGTH)) || (zone !== undefined && !isString(zone, 0, MAX_NAME_LENGTH))) {
    return undefined;
  }
  if (!isList(frontends)) return undefined;
  for (const frontend of frontends) if (!isHttpUrl(frontend)) return undefined;
  if (relay !== undefined && !isHttpUrl(relay)) return undefined;

  const registration: Registration = {
    cluster_id,
    namespace,
    name,
    model,
    capabilities: capabilities.slice() as string[],
    capacity: capacityItems,
    location: region === undefined ? (zone === undefined ? {} : { zone }) : zone === undefined ? { region } : { region, zone },
    frontends: frontends.slice() as string[],
    ...(relay === undefined ? {} : { relay }),
  };
  let locationJson = '{';
  if (region !== undefined) locationJson += `"region":${JSON.stringify(region)}`;
  if (zone !== undefined) locationJson += `${region === undefined ? '' : ','}"zone":${JSON.stringify(zone)}`;
  locationJson += '}';
  const json =
    `{"capabilities":${JSON.stringify(capabilities)},"capacity":${capacityJson},"cluster_id":${JSON.stringify(cluster_id)},` +
    `"frontends":${JSON.stringify(frontends)},"location":${locationJson},"model":${JSON.stringify(model)},` +
    `"name":${JSON.stringify(name)},"namespace":${JSON.stringify(namespace)}` +
    `${relay === undefined ? '' : `,"relay":${JSON.stringify(relay)}`}}`;
  return { registration, json };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasOnlyKeys(record: Record<string, unknown>, a: string, b: string): boolean {
  for (const key of Object.keys(record)) if (key !== a && key !== b) return false;
  return true;
}

function isString(value: unknown, min: number, max: number): value is string {
  return typeof value === 'string' && value.length >= min && value.length <= max;
}

function isList(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.length <= MAX_LIST_ITEMS;
}

/** What dnsName accepts (the regex admits no whitespace, so no trim check is needed). */
function isDnsName(value: unknown): value is string {
  return isString(value, 1, MAX_NAME_LENGTH) && DNS1123_SUBDOMAIN.test(value);
}

/** What httpUrl accepts: its pattern (which admits no whitespace), then the URL parser. */
function isHttpUrl(value: unknown): value is string {
  return typeof value === 'string' && HTTP_URL.test(value) && parsesAsHttpUrl(value);
}
