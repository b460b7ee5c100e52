// Turns script replies (change log entries, snapshot records) into the store's types. A reply that does
// not parse is an error, never skipped: the follower re-reads a snapshot instead of missing a change.
import type { Registration } from '../../contract/index.js';
import type { LeaseEvent, LeaseRecord } from '../types.js';
import type { SnapshotRecordReply, StreamEntryReply } from './scripts.js';

export class MalformedReplyError extends Error {
  override readonly name = 'MalformedReplyError';
}

export function parseChangeEntry([position, fieldList]: StreamEntryReply): LeaseEvent {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < fieldList.length; i += 2) fields.set(String(fieldList[i]), String(fieldList[i + 1]));
  const field = (name: string): string => {
    const value = fields.get(name);
    if (value === undefined) throw new MalformedReplyError(`change log entry ${position} has no ${name}`);
    return value;
  };
  const type = field('type');
  if (type === 'lapse') return { type, position, key: field('key'), atMs: integer(field('at_ms'), position) };
  if (type === 'upsert') {
    return {
      type,
      position,
      record: leaseRecord({
        key: field('key'),
        registrationJson: field('registration'),
        renewedAtMs: field('renewed_at_ms'),
        leaseMs: field('lease_ms'),
        version: field('version'),
        where: `change log entry ${position}`,
      }),
    };
  }
  throw new MalformedReplyError(`change log entry ${position} has unknown type ${JSON.stringify(type)}`);
}

export function parseSnapshotRecord([key, registrationJson, renewedAtMs, leaseMs, version]: SnapshotRecordReply): LeaseRecord {
  return leaseRecord({ key, registrationJson, renewedAtMs, leaseMs, version, where: `snapshot record of ${key}` });
}

function leaseRecord(raw: {
  key: string;
  registrationJson: string;
  renewedAtMs: string;
  leaseMs: string;
  version: string;
  where: string;
}): LeaseRecord {
  let registration: Registration;
  try {
    registration = JSON.parse(raw.registrationJson) as Registration;
  } catch (error) {
    throw new MalformedReplyError(`${raw.where}: registration is not JSON`, { cause: error });
  }
  const renewedAtMs = integer(raw.renewedAtMs, raw.where);
  const leaseMs = integer(raw.leaseMs, raw.where);
  return {
    key: raw.key,
    registration,
    renewedAtMs,
    leaseMs,
    deadlineMs: renewedAtMs + leaseMs,
    version: integer(raw.version, raw.where),
  };
}

function integer(text: string, where: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new MalformedReplyError(`${where}: ${JSON.stringify(text)} is not an integer`);
  return value;
}
