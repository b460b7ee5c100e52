// One spelling per registration, so "did the content change?" is a string comparison that does not
// depend on the order in which a client (or zod) happened to write the object's keys.

/**
 * JSON with object keys sorted at every depth; `undefined` members are dropped and `undefined` array items
 * become null, as JSON.stringify does. Written in one pass (no sorted copies: it runs on every heartbeat).
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) out += (i === 0 ? '' : ',') + (write(value[i]) ?? 'null');
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const member = write(record[key]);
    if (member === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + member;
    first = false;
  }
  return `${out}}`;
}
