// The store's Lua scripts (one file each, `<verb>-<nKeys>.lua`, documented in its header), read from
// next to this module (a build step copies them beside the compiled JS) and defined on a client once
// with defineCommand. ioredis then sends EVALSHA and falls back to EVAL after a restart of Redis.
// The read scripts are flagged `#!lua flags=no-writes`: a reader defines only those, so it runs on a
// read-only replica and cannot write even by mistake. A script that applies the renewal window has the line
// `-- @include lapse-rule.lua`, replaced here by that chunk, so the rule is written once for all of them.
import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';

/** Raw replies of the read-only scripts, as their headers describe them. */
export interface ReadScriptCommands {
  /**
   * Keys that may lapse as of `graceMs` ago, from `fromDeadline` (inclusive, or "-inf"), skipping `skip`
   * members at it; the renewal window applied with the reader's continuity (due-3.lua).
   */
  poolscopeDue(
    deadlines: string,
    stamp: string,
    outages: string,
    limit: number,
    graceMs: number,
    fromDeadline: string,
    skip: number,
    staleMs: number,
    lastReadMs: number,
    readSinceMs: number,
    silentMs: number,
  ): Promise<DueReply>;
  /** The renewal window as a reader applies it, and the last outage (window-2.lua). */
  poolscopeWindow(
    stamp: string,
    outages: string,
    staleMs: number,
    lastReadMs: number,
    readSinceMs: number,
    silentMs: number,
  ): Promise<WindowReply>;
  poolscopeReadChanges(changes: string, position: string, count: number): Promise<ReadChangesReply>;
  /** numberOfKeys first, then the pool hashes (an array is sent flattened). */
  poolscopeReadPools(numberOfKeys: number, poolHashes: string[]): Promise<PoolFieldsReply>;
}

/** Raw replies of the scripts that write (the home region's store only). */
export interface WriteScriptCommands {
  poolscopeHeartbeat(
    poolHash: string,
    deadlines: string,
    changes: string,
    stamp: string,
    outages: string,
    gapRenewals: string,
    poolKey: string,
    registrationJson: string,
    leaseMs: number,
    changeLogCap: number,
    backstopMs: number,
    staleMs: number,
    knownVersion: number,
  ): Promise<number>;
  poolscopeLapse(
    poolHash: string,
    deadlines: string,
    changes: string,
    stamp: string,
    outages: string,
    poolKey: string,
    changeLogCap: number,
    staleMs: number,
  ): Promise<number>;
  /** stamp-5.lua: `failed` 1 when the writer's commands failed since its last stamp. */
  poolscopeStamp(
    stamp: string,
    outages: string,
    deadlines: string,
    routerDeadlines: string,
    gapRenewals: string,
    failed: 0 | 1,
    staleMs: number,
    windowMs: number,
    keep: number,
    ownLastMs: number,
    extendMs: number,
  ): Promise<StampReply>;
}

export type StoreScriptCommands = ReadScriptCommands & WriteScriptCommands;

/** A pool's hash fields, as a snapshot reads them (changedAtMs null in a hash an older version wrote). */
export type SnapshotRecordReply = [
  poolKey: string,
  registrationJson: string,
  renewedAtMs: string,
  leaseMs: string,
  version: string,
  changedAtMs: string | null,
];
/**
 * read-pools-n.lua's reply: five fields per pool, flat (registration JSON, renewed_at_ms, lease_ms,
 * version, changed_at_ms); null fields when its hash is gone.
 */
export type PoolFieldsReply = (string | null)[];
/** Stream entries as XRANGE gives them: [id, [field, value, ...]]. */
export type StreamEntryReply = [id: string, fields: string[]];
export type ReadChangesReply = [1, StreamEntryReply[]] | [0];
/**
 * due-3.lua: Redis TIME in ms, the reader's unbroken reading since, when the earliest open renewal window
 * runs out (-1: none), then pool key and deadline pairs.
 */
export type DueReply = [nowMs: number, readSinceMs: number, heldUntilMs: number, ...keysAndDeadlines: string[]];
/** window-2.lua: see its header. */
export type WindowReply = [
  nowMs: number,
  readSinceMs: number,
  horizonMs: number,
  stampMs: number,
  lastStartMs: number,
  lastEndMs: number,
  lastWindowMs: number,
  covered: number,
];
/** stamp-5.lua: Redis TIME in ms, 1 when it recorded an outage (2: extended the last), its start, the leases it covers. */
export type StampReply = [nowMs: number, recorded: 0 | 1 | 2, startMs: number, covered: number];

interface ScriptFile {
  file: string;
  numberOfKeys?: number;
}

const READ_SCRIPTS: Record<keyof ReadScriptCommands, ScriptFile> = {
  poolscopeDue: { file: 'due-3.lua', numberOfKeys: 3 },
  poolscopeWindow: { file: 'window-2.lua', numberOfKeys: 2 },
  poolscopeReadChanges: { file: 'read-changes-1.lua', numberOfKeys: 1 },
  // Its key count varies: the caller passes it first.
  poolscopeReadPools: { file: 'read-pools-n.lua' },
};

const WRITE_SCRIPTS: Record<keyof WriteScriptCommands, ScriptFile> = {
  poolscopeHeartbeat: { file: 'heartbeat-6.lua', numberOfKeys: 6 },
  poolscopeLapse: { file: 'lapse-5.lua', numberOfKeys: 5 },
  poolscopeStamp: { file: 'stamp-5.lua', numberOfKeys: 5 },
};

/** Every read script must carry this first line (checked when it is loaded). */
export const NO_WRITES_SHEBANG = '#!lua flags=no-writes\n';

const sources = new Map<string, string>();

/** A script's line that stands for the shared chunk of that name (lapse-rule.lua). */
const INCLUDE = /^-- @include ([a-z-]+\.lua)$/m;

/**
 * A script's source as Redis runs it, its include line replaced by the chunk it names. Read on first use,
 * then kept: the files do not change while the process runs. Exported for the benchmarks, which load the
 * heartbeat script into Redis themselves.
 */
export function scriptSource(file: string): string {
  let lua = sources.get(file);
  if (lua === undefined) {
    lua = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    const include = INCLUDE.exec(lua);
    if (include) lua = lua.replace(INCLUDE, () => readFileSync(new URL(`./${include[1]}`, import.meta.url), 'utf8'));
    sources.set(file, lua);
  }
  return lua;
}

function define(client: RedisClient, scripts: Record<string, ScriptFile>, readOnly: boolean): void {
  for (const [name, { file, numberOfKeys }] of Object.entries(scripts)) {
    const lua = scriptSource(file);
    // The flag is what lets Redis run it on a read-only replica as a read (and refuse any write in it);
    // a read script without it is a mistake caught here, before a replica refuses it in production.
    if (readOnly && !lua.startsWith(NO_WRITES_SHEBANG)) throw new Error(`${file} is a read script without "${NO_WRITES_SHEBANG.trim()}"`);
    client.defineCommand(name, numberOfKeys === undefined ? { lua, readOnly } : { lua, numberOfKeys, readOnly });
  }
}

/** Defines the read-only scripts on the client (a follower's reader); returns the client typed with them. */
export function defineReadScripts(client: RedisClient): RedisClient & ReadScriptCommands {
  define(client, READ_SCRIPTS, true);
  return client as RedisClient & ReadScriptCommands;
}

/** Defines every store script on the client (the home region's store); returns the client typed with them. */
export function defineStoreScripts(client: RedisClient): RedisClient & StoreScriptCommands {
  define(client, READ_SCRIPTS, true);
  define(client, WRITE_SCRIPTS, false);
  return client as RedisClient & StoreScriptCommands;
}
