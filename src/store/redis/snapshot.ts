// A snapshot consistent with a change log position, read in small steps so Redis is never blocked by
// one command that grows with the number of pools (100k pools in one script took 1.5 s of Redis time).
//
// Why it is exact: let P0 be the newest log entry before the read and P1 the newest after it.
// 1. ZSCAN returns every member present for the whole scan (at least once), and each step's hashes are
//    read by one script (read-pools-n.lua), atomic with respect to the writing scripts, so every pool
//    read reflects some state between P0 and P1.
// 2. Every change of a pool's content or liveness (new lease, changed content, lapse) appends an entry to
//    the log in the same script. A pool with no entry in (P0, P1] did not change during the read, so what
//    was read is its state at P1 (a renewal moves only its deadline).
// 3. A pool with entries in (P0, P1] (including one that appeared or vanished during the scan) is set to
//    the state its last such entry describes: the upsert's record, or gone after a lapse.
// The result is the state exactly at the position of the last entry applied (≥ P1), the position
// returned; watch() from it yields every later change once. Each step is a single-slot command, so this
// works on Redis Cluster unchanged. If the log was trimmed past P0 during the read (only with a read
// slower than a whole log's worth of changes), the read starts over.
import { randomUUID } from 'node:crypto';
import type { PoolKey } from '../../contract/index.js';
import type { LeaseRecord, StoreSnapshot } from '../types.js';
import { StoreUnavailableError } from '../types.js';
import type { CommandRunner } from './command-runner.js';
import type { RedisClient } from './connection.js';
import type { StoreKeys } from './keys.js';
import { parseChangeEntry, parseSnapshotRecord } from './replies.js';
import type { StoreScriptCommands } from './scripts.js';

/** Members per ZSCAN step and hashes per round trip. */
const SCAN_COUNT = 1000;
const CHANGES_BATCH = 500;
const ATTEMPTS = 3;

export interface ReadSnapshotOptions {
  runner: CommandRunner;
  keys: StoreKeys;
}

type ScriptedClient = RedisClient & StoreScriptCommands;

export async function readSnapshot({ runner, keys }: ReadSnapshotOptions): Promise<StoreSnapshot> {
  const newestPosition = async () => {
    const [newest] = await runner.run('snapshot', (client) => client.xrevrange(keys.changes, '+', '-', 'COUNT', 1));
    return newest?.[0] ?? '0-0';
  };

  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const before = await newestPosition();
    const records = await readLeases(runner, keys);
    const after = await newestPosition();

    let position = before;
    let reachable = true;
    while (compareStreamIds(position, after) < 0) {
      const reply = await runner.run('snapshot', (client) =>
        (client as ScriptedClient).poolscopeReadChanges(keys.changes, position, CHANGES_BATCH),
      );
      if (reply[0] === 0) {
        reachable = false;
        break;
      }
      if (reply[1].length === 0) break;
      for (const entry of reply[1]) {
        const event = parseChangeEntry(entry);
        if (event.type === 'upsert') records.set(event.record.key, event.record);
        else records.delete(event.key);
        position = event.position;
      }
    }
    if (!reachable) continue;

    const [seconds, micros] = await runner.run('snapshot', (client) => client.time());
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return { records: [...records.values()], position, nowMs, epoch: await readEpoch(runner, keys) };
  }
  throw new StoreUnavailableError(`redis store: snapshot fell behind the change log ${ATTEMPTS} times`);
}

/**
 * The store's epoch: created with SET NX by the first reader after the data was lost (a restart without
 * persistence leaves no epoch key), so every replica reads the same new value afterwards.
 */
async function readEpoch(runner: CommandRunner, keys: StoreKeys): Promise<string> {
  const fresh = randomUUID();
  const previous = await runner.run('snapshot', (client) => client.set(keys.epoch, fresh, 'NX', 'GET'));
  return previous ?? fresh;
}

/** Every lease in the deadlines set, as its hash reads now (the caller corrects it with the log). */
async function readLeases(runner: CommandRunner, keys: StoreKeys): Promise<Map<PoolKey, LeaseRecord>> {
  const records = new Map<PoolKey, LeaseRecord>();
  let cursor = '0';
  do {
    const [next, flat] = await runner.run('snapshot', (client) => client.zscan(keys.deadlines, cursor, 'COUNT', SCAN_COUNT));
    const members = flat.filter((_, i) => i % 2 === 0);
    const hashes = members.map((member) => keys.pool(member));
    const rows = await runner.run('snapshot', (client) => (client as ScriptedClient).poolscopeReadPools(hashes.length, hashes));
    rows.forEach(([registration, renewedAtMs, leaseMs, version], i) => {
      // A member whose hash is gone was garbage-collected long after its deadline without a sweep; the
      // next sweep logs its lapse.
      if (registration == null || renewedAtMs == null || leaseMs == null || version == null) return;
      const key = members[i]!;
      records.set(key, parseSnapshotRecord([key, registration, renewedAtMs, leaseMs, version]));
    });
    cursor = next;
  } while (cursor !== '0');
  return records;
}

/** Orders stream ids (`ms-seq`, or "0-0"). */
export function compareStreamIds(a: string, b: string): number {
  const [aMs = 0n, aSeq = 0n] = a.split('-').map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split('-').map(BigInt);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  if (aSeq !== bSeq) return aSeq < bSeq ? -1 : 1;
  return 0;
}
