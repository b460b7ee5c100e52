// A snapshot consistent with a change log position, read in steps so Redis is never blocked by one
// command that grows with the number of pools (100k pools in one script took 1.5 s of Redis time).
//
// Why it is exact: let P0 be the newest log entry before the read and P1 the newest after it.
// 1. ZSCAN returns every member present for the whole scan (at least once), and each step's hashes are
//    read by scripts (read-pools-n.lua, 1,000 hashes each), atomic with respect to the writing scripts,
//    so every pool read reflects some state between P0 and P1.
// 2. Every change of a pool's content or liveness (new lease, changed content, lapse) appends an entry to
//    the log in the same script. A pool with no entry in (P0, P1] did not change during the read, so what
//    was read is its state at P1 (a renewal moves only its deadline).
// 3. A pool with entries in (P0, P1] (including one that appeared or vanished during the scan) is set to
//    the state its last such entry describes: the upsert's record, or gone after a lapse.
// The result is the state exactly at the position of the last entry applied (≥ P1), the position
// returned; watch() from it yields every later change once. Each step is a single-slot command, so this
// works on Redis Cluster unchanged (every key shares one hash tag, so one node serves them all). If the
// log was trimmed past P0 during the read (only with a read slower than a whole log's worth of changes),
// the read starts over.
//
// Pipelined, one round trip per step (a WAN link to another region's Redis pays each one): the first ZSCAN
// goes out behind the reads of P0 and the start time, each next ZSCAN as soon as the cursor before it is
// known, ahead of the read scripts of the step before (1,000 hashes each), and P1 behind the last read
// script, with the store's clock, its epoch and the replica check behind P1 (a round trip of their own
// only when the log had to be read after P1). All of them go on the one connection, and Redis runs one
// connection's commands in the order sent, so P0 is still read before the scan and P1 after every hash
// was read. A step is up to 10,000 members: a ZSCAN of that many takes Redis about 5-12 ms, a read script
// of 1,000 hashes about 6 ms, so no single command blocks Redis for long.
//
// A pool hash outlives its deadline (by a backstop far longer than any renewal window), so whether a lease
// is still live is judged here, by the renewal window's rule (docs/contract.md §9, window-2.lua read behind
// P1): a record is kept when its deadline had not passed when the read began (Redis TIME then), or is past
// the horizon of what may lapse as of the end of the read (a window holds it, or a stale stamp of writers
// not known gone). A lease left out may still have its lapse follow in the log, for a pool the snapshot
// does not hold, and a follower ignores a lapse of a pool it does not know. No record is left out for a
// deadline as of the end of the read, though: a record read earlier in the scan, or taken from the log,
// carries the deadline of its last logged change or of its read, and a renewal since (which logs nothing)
// may have moved it. Dropping such a record would lose a live pool until its next content change; keeping
// one that did run out costs one lapse, which follows in the log. A renewal after a deadline is never
// silent: it is logged as a new lease, or, for a lease a window held, as an upsert that continues it.
//
// A caller that applies leases as they come (onRead) is handed each read script's records whose deadline
// is after the read's start, as they are parsed: kept by the rule above whatever the window says, and
// each as some state between P0 and P1. The log's corrections and the rest are in the settled snapshot,
// whose records are the same objects where nothing corrected them.
//
// Every command here only reads (the read scripts are flagged no-writes), so a snapshot also works on a
// read-only replica; the epoch is written only by the home region's store (EpochAccess).
import { randomUUID } from 'node:crypto';
import type { PoolKey } from '../../contract/index.js';
import type { LeaseRecord, SnapshotParts, StoreSnapshot } from '../types.js';
import { StoreUnavailableError, UNWRITTEN_EPOCH } from '../types.js';
import type { CommandRunner } from './command-runner.js';
import type { RedisClient } from './connection.js';
import type { StoreKeys } from './keys.js';
import { parseWindowReply, type ReaderContinuity } from './renewal-window.js';
import { ReadPipeline, type PoolWeight } from './read-pipeline.js';
import type { ReplicaLink } from './replica-link.js';
import { MalformedReplyError, parseSnapshotRecord, readEntry, type UnreadableEntry } from './replies.js';
import type { PoolFieldsReply, ReadScriptCommands } from './scripts.js';

/** Members per ZSCAN step (about: a hint to Redis) and hashes per read script at most. */
const SCAN_COUNT = 10_000;
const READ_BATCH = 1000;
/**
 * Bytes of registrations per read script, and of replies owed at once (docs/design.md "Snapshots that
 * scale with bytes"): a reply crosses even a 1 MB/s link within a second, and the window covers the
 * round trip of a 40 ms link at 100 MB/s (of a 150 ms one at 27 MB/s) while Redis buffers at most that
 * much for one reader.
 */
const READ_BYTES = 512 * 1024;
const WINDOW_BYTES = 8 * 1024 * 1024;
/** A pool's weight until a reply says: a large registration, so the first reads stay small. */
const INITIAL_POOL_BYTES = 16 * 1024;
const CHANGES_BATCH = 500;
const ATTEMPTS = 3;

/**
 * `create`: the home region's store creates the epoch key when it is missing (SET NX), so every replica
 * reads the same new value after a loss of data. `read`: a reader never writes; it reports the key as it
 * finds it, or UNWRITTEN_EPOCH while it does not exist.
 */
export type EpochAccess = 'create' | 'read';

/**
 * A reader's epoch while the epoch key does not exist (UNWRITTEN_EPOCH): on a replica that has not received
 * it yet, or in a region whose own replicas have not read a snapshot since its Redis lost its data (they
 * create it at their first one, within a second of coming back). A constant, so readers agree on it. A
 * follower that knew a written epoch and now finds none holds that region's pools for one lease (the
 * loss); the epoch written next is not a second loss, nor is one written after the follower's first read
 * found none (RegionFeed). A loss of data while the key stays missing goes unseen, but it loses nothing a
 * follower could miss: leases are written only by that region's replicas, and those create the key
 * before anything else reads their leases.
 */
export { UNWRITTEN_EPOCH };

export interface ReadSnapshotOptions {
  runner: CommandRunner;
  keys: StoreKeys;
  epoch: EpochAccess;
  replicaLink: ReplicaLink;
  /** The reader's unbroken reading of the store, for the renewal window (window-2.lua). */
  continuity: ReaderContinuity;
  /** A pool hash or log entry this version cannot read: logged and counted, that one pool skipped. */
  skipUnreadable: (entry: UnreadableEntry) => void;
  /** What the reader's pools weighed in its snapshots so far (read-pipeline.ts), updated here. */
  weight: PoolWeight;
  /** Handed each read script's leases live as the read began, as they are read (LeaseReader.snapshot). */
  onRead?: SnapshotParts;
}

type ReadClient = RedisClient & ReadScriptCommands;

export async function readSnapshot({ runner, keys, epoch, replicaLink, continuity, skipUnreadable, weight, onRead }: ReadSnapshotOptions): Promise<StoreSnapshot> {
  // The clock with the renewal window, the epoch, and whether a replica's data is current at all: sent
  // beside another command.
  const closing = (client: RedisClient) =>
    Promise.all([
      (client as ReadClient).poolscopeWindow(keys.stamp, keys.outages, ...continuity.args()),
      readEpoch(client, keys, epoch),
      replicaLink.check(client),
    ]).then(([reply, currentEpoch, link]) => {
      const window = parseWindowReply(reply);
      continuity.read(window.status.nowMs, window.readSinceMs);
      // A read replica not proven current: a stale stamp there may be a stalled link, not writers gone,
      // so only what ran out before the stamp counts as run out (the rule's horizon for writers not gone).
      let horizonMs = window.horizonMs;
      if (!link.proven) {
        continuity.gap();
        horizonMs = Math.min(horizonMs, window.status.stampMs ?? -1);
      }
      return { nowMs: window.status.nowMs, horizonMs, epoch: currentEpoch };
    });
  // P1, with the closing reads behind it in the same round trip.
  const newestPosition = (pipeline: ReadPipeline) =>
    pipeline.send(async (client) => {
      const [[newest], closed] = await Promise.all([client.xrevrange(keys.changes, '+', '-', 'COUNT', 1), closing(client)]);
      return { after: newest?.[0] ?? '0-0', closed };
    });

  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const pipeline = new ReadPipeline({
      runner,
      what: 'snapshot',
      windowBytes: WINDOW_BYTES,
      readBytes: READ_BYTES,
      maxPools: READ_BATCH,
      initialPoolBytes: INITIAL_POOL_BYTES,
      weight,
    });
    // Sent in one turn on the one connection, so Redis runs them in this order: the first ZSCAN step goes
    // out behind the position P0 without waiting for it (see readLeases for the rest of the pipeline).
    const started = pipeline.send(async (client) => {
      const [[newest], time] = await Promise.all([client.xrevrange(keys.changes, '+', '-', 'COUNT', 1), client.time()]);
      return [newest?.[0] ?? '0-0', timeMs(time)] as const;
    });
    // A lease is handed over as read only when its deadline is after the read's start: kept whatever the
    // renewal window says (the rule below). One that ran out before is judged when the read ends.
    const handOver = onRead && ((records: LeaseRecord[], startMs: number) => {
      const live = records.filter((record) => record.deadlineMs > startMs);
      if (live.length > 0) onRead(live);
    });
    const [[before, startMs], { records, after, closed }] = await Promise.all([
      started,
      readLeases(pipeline, keys, newestPosition, skipUnreadable, handOver && (async (records) => handOver(records, (await started)[1]))),
    ]);

    let position = before;
    let reachable = true;
    while (compareStreamIds(position, after) < 0) {
      const reply = await runner.run('snapshot', (client) =>
        (client as ReadClient).poolscopeReadChanges(keys.changes, position, CHANGES_BATCH),
      );
      if (reply[0] === 0) {
        reachable = false;
        break;
      }
      if (reply[1].length === 0) break;
      for (const entry of reply[1]) {
        position = entry[0];
        const event = readEntry(entry, skipUnreadable);
        if (event?.type === 'upsert') records.set(event.record.key, event.record);
        else if (event?.type === 'lapse') records.delete(event.key);
      }
    }
    if (!reachable) continue;

    // Read behind P1; read again when the log was read after it, so they are never older than the position.
    const { nowMs, horizonMs, epoch: currentEpoch } = position === before ? closed : await runner.run('snapshot', closing);
    // Live when it had not run out as the read began, or when it may not lapse yet (a window holds it).
    const keptAfter = Math.min(startMs, horizonMs);
    const live = [...records.values()].filter((record) => record.deadlineMs > keptAfter);
    return { records: live, position, nowMs, epoch: currentEpoch };
  }
  throw new StoreUnavailableError(`redis store: snapshot fell behind the change log ${ATTEMPTS} times`);
}

/**
 * The store's epoch. The home store creates it with SET NX GET when missing (a restart without persistence
 * leaves no epoch key), so every replica reads the same new value afterwards; a reader only reads it.
 */
async function readEpoch(client: RedisClient, keys: StoreKeys, access: EpochAccess): Promise<string> {
  if (access === 'read') return (await client.get(keys.epoch)) ?? UNWRITTEN_EPOCH;
  const fresh = randomUUID();
  const previous = await client.set(keys.epoch, fresh, 'NX', 'GET');
  return previous ?? fresh;
}

/**
 * Every lease in the deadlines set, as its hash reads now (the caller corrects it with the log), and the
 * newest log position after the last step was read (P1).
 *
 * Pipelined (see the header and read-pipeline.ts): each ZSCAN step goes out as soon as the previous cursor
 * is known, ahead of the read scripts of the previous step's members, so a step costs one round trip; the
 * read scripts go out as the replies owed leave room, each sized to the bytes a pool has weighed so far.
 * The newest position goes out behind the last read script, on the same connection, so it is read after
 * every hash.
 */
async function readLeases<Tail extends { after: string }>(
  pipeline: ReadPipeline,
  keys: StoreKeys,
  newestPosition: (pipeline: ReadPipeline) => Promise<Tail>,
  skipUnreadable: (entry: UnreadableEntry) => void,
  onRead: ((records: LeaseRecord[]) => Promise<void>) | undefined,
): Promise<Tail & { records: Map<PoolKey, LeaseRecord> }> {
  const records = new Map<PoolKey, LeaseRecord>();
  const store = (members: string[], fields: PoolFieldsReply) => {
    const read: LeaseRecord[] = [];
    members.forEach((key, i) => {
      const at = i * 5;
      const registration = fields[at];
      const renewedAtMs = fields[at + 1];
      const leaseMs = fields[at + 2];
      const version = fields[at + 3];
      // A member whose hash is gone ran out: the hash expired at its deadline and no sweep has come by
      // yet (the sweep, or a follower's dueLapses, still reports its lapse).
      if (registration == null || renewedAtMs == null || leaseMs == null || version == null) return;
      try {
        const record = parseSnapshotRecord([key, registration, renewedAtMs, leaseMs, version, fields[at + 4] as string | null]);
        records.set(key, record);
        read.push(record);
      } catch (error) {
        // That one pool is left out; the rest of the snapshot stands (docs/contract.md §8).
        if (!(error instanceof MalformedReplyError)) throw error;
        skipUnreadable({ pool: key, err: error.message });
      }
    });
    return onRead?.(read);
  };
  const reads: Promise<void>[] = [];
  const zscan = (cursor: string) => {
    const step = pipeline.send((client) => client.zscan(keys.deadlines, cursor, 'COUNT', SCAN_COUNT));
    // Awaited in turn; should a read fail first, the snapshot ends without it, and its failure must not
    // count as unobserved.
    step.catch(() => {});
    return step;
  };
  let scan: Promise<[string, string[]]> | undefined = zscan('0');
  /** The members of the last ZSCAN step (member, score, member, …), read up to `next`. */
  let flat: string[] = [];
  let next = 0;
  for (;;) {
    if (next >= flat.length) {
      if (scan === undefined) break;
      const [cursor, step]: [string, string[]] = await scan;
      // The next step goes out first, ahead of this step's reads, so Redis answers it without waiting for them.
      scan = cursor === '0' ? undefined : zscan(cursor);
      [flat, next] = [step, 0];
      continue;
    }
    const count = pipeline.nextBatch((flat.length - next) / 2);
    const members: string[] = [];
    for (let i = next; i < flat.length && members.length < count; i += 2) members.push(flat[i]!);
    next += 2 * members.length;
    const hashes = members.map((member) => keys.pool(member));
    const { reply } = await pipeline.read(members.length, (client) => (client as ReadClient).poolscopeReadPools(hashes.length, hashes), replyBytes);
    const read = reply.then((fields) => store(members, fields));
    // Awaited below; a failure meanwhile must not count as unobserved (the next read or ZSCAN fails with it).
    read.catch(() => {});
    reads.push(read);
  }
  const [tail] = await Promise.all([newestPosition(pipeline), ...reads]);
  return { ...tail, records };
}

/** About the bytes a read script's reply carried: its strings' lengths. */
function replyBytes(fields: PoolFieldsReply): number {
  let bytes = 0;
  for (const field of fields) bytes += field == null ? 1 : field.length + 8;
  return bytes;
}

/** A TIME reply ([seconds, microseconds]) in whole ms, as the scripts read Redis's clock. */
function timeMs([seconds, micros]: readonly (number | string)[]): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Orders stream ids (`ms-seq`, or "0-0"). */
export function compareStreamIds(a: string, b: string): number {
  const [aMs = 0n, aSeq = 0n] = a.split('-').map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split('-').map(BigInt);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  if (aSeq !== bSeq) return aSeq < bSeq ? -1 : 1;
  return 0;
}
