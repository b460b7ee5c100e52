// Turns script replies (change log entries, snapshot records) into the store's types. An entry this
// version cannot read (a change log entry, a pool's hash, whoever wrote it) is a MalformedReplyError;
// the reader skips that one entry, logs and counts it (docs/contract.md §8), and reads on.
import type { Registration } from '../../contract/index.js';
import type { DueLapse, LeaseEvent, LeaseRecord } from '../types.js';
import type { DueReply, SnapshotRecordReply, StreamEntryReply } from './scripts.js';
import { sharedStrings } from './shared-strings.js';

export class MalformedReplyError extends Error {
  override readonly name = 'MalformedReplyError';
}

/** Where an unreadable entry was found: a change log entry (its stream id) or a pool's hash (its key). */
export type UnreadableEntry = { streamId: string; err: string } | { pool: string; err: string };

/** The entry's event, or undefined (reported to `skip`) when this version cannot read it. */
export function readEntry(entry: StreamEntryReply, skip: (entry: UnreadableEntry) => void): LeaseEvent | undefined {
  try {
    return parseChangeEntry(entry);
  } catch (error) {
    if (!(error instanceof MalformedReplyError)) throw error;
    skip({ streamId: String(entry[0]), err: error.message });
    return undefined;
  }
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
        // When the content last changed: an upsert that continues a lease a renewal window held says so;
        // any other upsert is logged exactly when the content changes, so its renewal is that change.
        changedAtMs: fields.get('changed_at_ms') ?? field('renewed_at_ms'),
        where: `change log entry ${position}`,
      }),
    };
  }
  throw new MalformedReplyError(`change log entry ${position} has unknown type ${JSON.stringify(type)}`);
}

/**
 * due-3.lua's reply: Redis's clock, the reader's unbroken reading since, and the due leases, soonest first
 * (`score` is the deadline as Redis wrote it).
 */
export function parseDueReply(reply: DueReply): {
  nowMs: number;
  readSinceMs: number;
  /** When the earliest open renewal window runs out (Redis ms); undefined when none is open. */
  heldUntilMs: number | undefined;
  due: (DueLapse & { score: string })[];
} {
  const [nowMs, readSinceMs, heldUntilMs, ...flat] = reply;
  const due: (DueLapse & { score: string })[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const key = String(flat[i]);
    const score = String(flat[i + 1]);
    // A sorted set score is always a number; deadlines are whole ms.
    due.push({ key, atMs: Number(score), score });
  }
  const held = Number(heldUntilMs);
  return { nowMs: Number(nowMs), readSinceMs: Number(readSinceMs), heldUntilMs: held >= 0 ? held : undefined, due };
}

export function parseSnapshotRecord([key, registrationJson, renewedAtMs, leaseMs, version, changedAtMs]: SnapshotRecordReply): LeaseRecord {
  // A hash written before changed_at_ms existed: its last renewal is the latest the change can be.
  const changed = changedAtMs ?? renewedAtMs;
  return leaseRecord({ key, registrationJson, renewedAtMs, leaseMs, version, changedAtMs: changed, where: `snapshot record of ${key}` });
}

function leaseRecord(raw: {
  key: string;
  registrationJson: string;
  renewedAtMs: string;
  leaseMs: string;
  version: string;
  changedAtMs: string;
  where: string;
}): LeaseRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.registrationJson);
  } catch (error) {
    throw new MalformedReplyError(`${raw.where}: registration is not JSON`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new MalformedReplyError(`${raw.where}: registration is not a JSON object`);
  }
  const registration = sharedStrings.shareFields(parsed as Registration);
  const renewedAtMs = integer(raw.renewedAtMs, raw.where);
  const leaseMs = integer(raw.leaseMs, raw.where);
  return {
    key: raw.key,
    registration,
    renewedAtMs,
    leaseMs,
    deadlineMs: renewedAtMs + leaseMs,
    version: integer(raw.version, raw.where),
    changedAtMs: integer(raw.changedAtMs, raw.where),
  };
}

function integer(text: string, where: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new MalformedReplyError(`${where}: ${JSON.stringify(text)} is not an integer`);
  return value;
}
