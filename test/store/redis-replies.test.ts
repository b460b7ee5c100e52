// How the Redis store reads its scripts' replies (docs/design.md "The store"): change log entries,
// snapshot records and due lapses, and which entries it cannot read (skipped, logged and counted by the
// reader, docs/contract.md §8). No Redis: the replies are the arrays ioredis hands over.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/store/canonical-json.js';
import {
  MalformedReplyError,
  parseChangeEntry,
  parseDueReply,
  parseSnapshotRecord,
  readEntry,
  type UnreadableEntry,
} from '../../src/store/redis/replies.js';
import { registration } from './contract-support.js';

const REGISTRATION = registration('p1');
const JSON_TEXT = canonicalJson(REGISTRATION);

const upsertFields = (overrides: Record<string, string | undefined> = {}): string[] => {
  const fields: Record<string, string | undefined> = {
    type: 'upsert',
    key: 'c/ns/p1',
    registration: JSON_TEXT,
    renewed_at_ms: '1000',
    lease_ms: '15000',
    version: '3',
    ...overrides,
  };
  return Object.entries(fields).flatMap(([name, value]) => (value === undefined ? [] : [name, value]));
};

describe('change log entries', () => {
  it('an upsert is the record it logged, its renewal the content change, its deadline renewal + lease', () => {
    expect(parseChangeEntry(['1-0', upsertFields()])).toEqual({
      type: 'upsert',
      position: '1-0',
      record: {
        key: 'c/ns/p1',
        registration: REGISTRATION,
        renewedAtMs: 1000,
        leaseMs: 15000,
        deadlineMs: 16000,
        version: 3,
        changedAtMs: 1000,
      },
    });
  });

  it('a lapse names the key and the deadline it lapsed at', () => {
    expect(parseChangeEntry(['2-5', ['type', 'lapse', 'key', 'c/ns/p1', 'at_ms', '16000']])).toEqual({
      type: 'lapse',
      position: '2-5',
      key: 'c/ns/p1',
      atMs: 16000,
    });
  });

  it('fields may come in any order, and a dangling field name is ignored', () => {
    const fields = ['at_ms', '7', 'key', 'k', 'type', 'lapse', 'dangling'];
    expect(parseChangeEntry(['3-0', fields])).toEqual({ type: 'lapse', position: '3-0', key: 'k', atMs: 7 });
  });

  it.each<[string, string[], string]>([
    ['no type', ['key', 'k'], 'change log entry 9-0 has no type'],
    ['an unknown type', ['type', 'rename', 'key', 'k'], 'change log entry 9-0 has unknown type "rename"'],
    ['a lapse without at_ms', ['type', 'lapse', 'key', 'k'], 'change log entry 9-0 has no at_ms'],
    ['a lapse without key', ['type', 'lapse', 'at_ms', '1'], 'change log entry 9-0 has no key'],
    ['a lapse at a non-integer', ['type', 'lapse', 'key', 'k', 'at_ms', '1.5'], '9-0: "1.5" is not an integer'],
    ['an upsert without registration', upsertFields({ registration: undefined }), 'change log entry 9-0 has no registration'],
    ['an upsert without version', upsertFields({ version: undefined }), 'change log entry 9-0 has no version'],
    ['an upsert without lease_ms', upsertFields({ lease_ms: undefined }), 'change log entry 9-0 has no lease_ms'],
    ['an upsert without renewed_at_ms', upsertFields({ renewed_at_ms: undefined }), 'change log entry 9-0 has no renewed_at_ms'],
    ['an upsert without key', upsertFields({ key: undefined }), 'change log entry 9-0 has no key'],
    ['a registration that is not JSON', upsertFields({ registration: '{"cluster_id":' }), 'change log entry 9-0: registration is not JSON'],
    ['a lease that is not a number', upsertFields({ lease_ms: 'soon' }), 'change log entry 9-0: "soon" is not an integer'],
    ['a renewal beyond a safe integer', upsertFields({ renewed_at_ms: '9007199254740993' }), 'change log entry 9-0: "9007199254740993" is not an integer'],
    ['a version that is not a number', upsertFields({ version: 'v3' }), 'change log entry 9-0: "v3" is not an integer'],
  ])('%s cannot be read', (_what, fields, message) => {
    const read = () => parseChangeEntry(['9-0', fields]);
    expect(read).toThrow(MalformedReplyError);
    expect(read).toThrow(message);
  });

  it('an unreadable entry is reported with its stream id and skipped; a readable one is returned', () => {
    const skipped: UnreadableEntry[] = [];
    expect(readEntry(['4-1', ['type', 'rename']], (entry) => skipped.push(entry))).toBeUndefined();
    expect(skipped).toEqual([{ streamId: '4-1', err: 'change log entry 4-1 has unknown type "rename"' }]);
    expect(readEntry(['4-2', ['type', 'lapse', 'key', 'k', 'at_ms', '1']], (entry) => skipped.push(entry))).toEqual({
      type: 'lapse',
      position: '4-2',
      key: 'k',
      atMs: 1,
    });
    expect(skipped).toHaveLength(1);
  });

  it('an error that is not about the entry is not swallowed', () => {
    const broken = ['4-3', null] as unknown as [string, string[]];
    expect(() => readEntry(broken, () => {})).toThrow(TypeError);
  });

  it('a MalformedReplyError names itself', () => {
    expect(new MalformedReplyError('x').name).toBe('MalformedReplyError');
  });
});

describe('snapshot records', () => {
  it('read every field, with the deadline at renewal + lease', () => {
    expect(parseSnapshotRecord(['c/ns/p1', JSON_TEXT, '1000', '15000', '4', '900'])).toEqual({
      key: 'c/ns/p1',
      registration: REGISTRATION,
      renewedAtMs: 1000,
      leaseMs: 15000,
      deadlineMs: 16000,
      version: 4,
      changedAtMs: 900,
    });
  });

  it('a hash written before changed_at_ms existed changed at its last renewal at the latest', () => {
    expect(parseSnapshotRecord(['c/ns/p1', JSON_TEXT, '1000', '15000', '4', null]).changedAtMs).toBe(1000);
  });

  it('an unreadable hash names the pool', () => {
    expect(() => parseSnapshotRecord(['c/ns/p1', 'not json', '1000', '15000', '4', '900'])).toThrow('snapshot record of c/ns/p1: registration is not JSON');
    expect(() => parseSnapshotRecord(['c/ns/p1', JSON_TEXT, '1000', '15000', '4', 'x'])).toThrow('snapshot record of c/ns/p1: "x" is not an integer');
  });

  it('a hash whose registration is JSON but not an object is unreadable, and says so', () => {
    for (const text of ['null', '3', '"text"', '[]', 'true']) {
      expect(() => parseSnapshotRecord(['c/ns/p1', text, '1000', '15000', '4', '900'])).toThrow(
        new MalformedReplyError('snapshot record of c/ns/p1: registration is not a JSON object'),
      );
    }
  });
});

describe('due lapses', () => {
  it("are Redis's clock, the reader's unbroken reading, then each key with its deadline, soonest first as Redis sent them", () => {
    expect(parseDueReply([5000, 3000, 7000, 'a', '4000', 'b', '4500'])).toEqual({
      nowMs: 5000,
      readSinceMs: 3000,
      heldUntilMs: 7000,
      due: [
        { key: 'a', atMs: 4000, score: '4000' },
        { key: 'b', atMs: 4500, score: '4500' },
      ],
    });
  });

  it('none due is an empty list, and a dangling key is ignored', () => {
    expect(parseDueReply([5000, -1, -1])).toEqual({ nowMs: 5000, readSinceMs: -1, heldUntilMs: undefined, due: [] });
    expect(parseDueReply([5000, -1, -1, 'a', '4000', 'b'] as never)).toEqual({
      nowMs: 5000,
      readSinceMs: -1,
      heldUntilMs: undefined,
      due: [{ key: 'a', atMs: 4000, score: '4000' }],
    });
  });
});
