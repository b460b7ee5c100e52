// The store's Lua scripts (one file each, `<verb>-<nKeys>.lua`, documented in its header), read from
// next to this module (a build step copies them beside the compiled JS) and defined on a client once
// with defineCommand. ioredis then sends EVALSHA and falls back to EVAL after a restart of Redis.
import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';

/** Raw replies, as the script headers describe them. */
export interface StoreScriptCommands {
  poolscopeHeartbeat(
    poolHash: string,
    deadlines: string,
    changes: string,
    poolKey: string,
    registrationJson: string,
    leaseMs: number,
    gcTtlMs: number,
    changeLogCap: number,
  ): Promise<[changed: number, version: number, renewedAtMs: number, upsertId: string]>;
  poolscopeLapse(poolHash: string, deadlines: string, changes: string, poolKey: string, changeLogCap: number): Promise<number>;
  poolscopeDue(deadlines: string, limit: number): Promise<string[]>;
  poolscopeReadChanges(changes: string, position: string, count: number): Promise<ReadChangesReply>;
  /** numberOfKeys first, then the pool hashes (an array is sent flattened). */
  poolscopeReadPools(numberOfKeys: number, poolHashes: string[]): Promise<PoolFieldsReply[]>;
}

/** A pool's hash fields, as a snapshot reads them. */
export type SnapshotRecordReply = [poolKey: string, registrationJson: string, renewedAtMs: string, leaseMs: string, version: string];
/** read-pools-n.lua's row for one pool; null fields when its hash is gone. */
export type PoolFieldsReply = [registrationJson: string | null, renewedAtMs: string | null, leaseMs: string | null, version: string | null];
/** Stream entries as XRANGE gives them: [id, [field, value, ...]]. */
export type StreamEntryReply = [id: string, fields: string[]];
export type ReadChangesReply = [1, StreamEntryReply[]] | [0];

const SCRIPTS: Record<keyof StoreScriptCommands, { file: string; numberOfKeys?: number }> = {
  poolscopeHeartbeat: { file: 'heartbeat-3.lua', numberOfKeys: 3 },
  poolscopeLapse: { file: 'lapse-3.lua', numberOfKeys: 3 },
  poolscopeDue: { file: 'due-1.lua', numberOfKeys: 1 },
  poolscopeReadChanges: { file: 'read-changes-1.lua', numberOfKeys: 1 },
  // Its key count varies: the caller passes it first.
  poolscopeReadPools: { file: 'read-pools-n.lua' },
};

let sources: Map<string, string> | undefined;

/** Read on first use, then kept: the files do not change while the process runs. */
function scriptSources(): Map<string, string> {
  sources ??= new Map(
    Object.values(SCRIPTS).map(({ file }) => [file, readFileSync(new URL(`./${file}`, import.meta.url), 'utf8')]),
  );
  return sources;
}

/** Defines every store script on the client; returns the client typed with them. */
export function defineStoreScripts(client: RedisClient): RedisClient & StoreScriptCommands {
  const lua = scriptSources();
  for (const [name, { file, numberOfKeys }] of Object.entries(SCRIPTS)) {
    client.defineCommand(name, numberOfKeys === undefined ? { lua: lua.get(file)! } : { lua: lua.get(file)!, numberOfKeys });
  }
  return client as RedisClient & StoreScriptCommands;
}
