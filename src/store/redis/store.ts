// The Redis RegistrationStore: the home region's leases, shared by every replica of the region
// (docs/design.md "The store"). One hash per pool, expiring at its lease deadline; one sorted set of
// deadlines; one change log stream; all under the hash tag `{<prefix>}` (keys.ts). Every write is one
// Lua script that reads Redis TIME, so all replicas judge leases on one clock. Reads go through the
// same RedisLeaseReader a follower of another region uses (reader.ts), on this store's connection.
import type { Logger } from 'pino';
import { poolKey, type PoolKey, type Registration } from '../../contract/index.js';
import { canonicalJson } from '../canonical-json.js';
import type { DueLapse, HeartbeatResult, LeaseEvent, RegistrationStore, StoreSnapshot, StoreStats, SweepResult } from '../types.js';
import type { RedisClient } from './connection.js';
import { RedisLeaseReader } from './reader.js';
import { parseDueReply } from './replies.js';
import { defineStoreScripts, type StoreScriptCommands } from './scripts.js';
import { openRedisSession, type RedisSession } from './session.js';

export const DEFAULT_CHANGE_LOG_CAP = 10_000;
/** Due leases lapsed per round trip; sweep() loops while a batch comes back full. */
const SWEEP_BATCH = 256;

export interface RedisStoreOptions {
  /** redis://, rediss://, redis+sentinel://, redis+cluster:// (see url.ts). */
  url: string;
  /** Keys live under the hash tag `{<prefix>}`. */
  prefix: string;
  leaseMs: number;
  /** Every store call answers or fails (StoreUnavailableError) within about this long. */
  commandTimeoutMs: number;
  logger: Logger;
  /** Change log entries kept (XADD MAXLEN ~; default 10,000). */
  changeLogCap?: number;
}

export function createRedisStore(options: RedisStoreOptions): RegistrationStore {
  return new RedisStore(options);
}

type ScriptedClient = RedisClient & StoreScriptCommands;

class RedisStore implements RegistrationStore {
  readonly kind = 'redis' as const;
  readonly forgetsOnRestart = false;
  private readonly session: RedisSession<ScriptedClient>;
  private readonly reader: RedisLeaseReader;
  private readonly leaseMs: number;
  private readonly changeLogCap: number;

  constructor(options: RedisStoreOptions) {
    if (!Number.isSafeInteger(options.leaseMs) || options.leaseMs <= 0) {
      throw new RangeError(`leaseMs must be a positive integer, got ${options.leaseMs}`);
    }
    this.leaseMs = options.leaseMs;
    this.changeLogCap = options.changeLogCap ?? DEFAULT_CHANGE_LOG_CAP;
    this.session = openRedisSession({
      url: options.url,
      prefix: options.prefix,
      commandTimeoutMs: options.commandTimeoutMs,
      logger: options.logger,
      connectionName: 'poolscope',
      // Heartbeats from many PoolRelays arrive together: one write for all of a turn's scripts.
      autoPipelining: true,
      defineScripts: defineStoreScripts,
    });
    // The home store creates the epoch when it is missing; a follower's reader only reads it.
    this.reader = new RedisLeaseReader(this.session, 'create');
  }

  async heartbeat(registration: Registration, canonical?: string): Promise<HeartbeatResult> {
    const key = poolKey(registration);
    const { runner, keys, client } = this.session;
    const changed = await runner.run('heartbeat', () =>
      client.poolscopeHeartbeat(
        keys.pool(key),
        keys.deadlines,
        keys.changes,
        key,
        canonical ?? canonicalJson(registration),
        this.leaseMs,
        this.changeLogCap,
      ),
    );
    return { key, leaseMs: this.leaseMs, changed: changed === 1 };
  }

  snapshot(): Promise<StoreSnapshot> {
    return this.reader.snapshot();
  }

  watch(position: string, signal: AbortSignal): AsyncIterable<LeaseEvent> {
    return this.reader.watch(position, signal);
  }

  dueLapses(graceMs?: number): Promise<DueLapse[]> {
    return this.reader.dueLapses(graceMs);
  }

  /**
   * Finds due leases by Redis TIME and lapses each with a script that checks again (lapse-3.lua). The
   * soonest deadline left is read behind the last command, in the same round trip, and returned as a
   * duration on Redis's clock (from its TIME in the due reply), so the sweeper can come back just then.
   */
  async sweep(): Promise<SweepResult> {
    const { runner, keys, client } = this.session;
    let lapsed = 0;
    for (;;) {
      // Lapsed members leave the set, so each batch starts from the soonest deadline again.
      const [reply, soonest] = await runner.run('sweep', () =>
        Promise.all([client.poolscopeDue(keys.deadlines, SWEEP_BATCH, 0, '-inf', 0), this.soonestDeadline()]),
      );
      const answeredAt = performance.now();
      const { nowMs, due } = parseDueReply(reply);
      if (due.length === 0) return { lapsed, nextDueInMs: nextDueInMs(soonest, nowMs, answeredAt) };
      // Sent together, so one batch costs one round trip; the soonest deadline is read after the lapses.
      const results = await runner.run('sweep', () =>
        Promise.all([Promise.all(due.map(({ key }) => this.lapse(key))), this.soonestDeadline()]),
      );
      lapsed += results[0].reduce((sum, result) => sum + result, 0);
      if (due.length < SWEEP_BATCH) return { lapsed, nextDueInMs: nextDueInMs(results[1], nowMs, answeredAt) };
    }
  }

  onAvailable(listener: () => void): () => void {
    return this.reader.onAvailable(listener);
  }

  stats(): StoreStats {
    return this.reader.stats();
  }

  close(): Promise<void> {
    return this.reader.close();
  }

  /** `ZRANGE deadlines 0 0 WITHSCORES`: [member, deadline] of the soonest deadline, [] when none is held. */
  private soonestDeadline(): Promise<string[]> {
    const { keys, client } = this.session;
    return client.zrange(keys.deadlines, '0', '0', 'WITHSCORES');
  }

  private lapse(member: PoolKey): Promise<number> {
    const { keys, client } = this.session;
    return client.poolscopeLapse(keys.pool(member), keys.deadlines, keys.changes, member, this.changeLogCap);
  }
}

/**
 * From `soonest` (a `ZRANGE 0 0 WITHSCORES` reply), Redis TIME `nowMs` and when that was read here
 * (performance.now()): how long from now until the soonest deadline runs out, at least 0; undefined
 * when none is held.
 */
export function nextDueInMs(soonest: readonly string[], nowMs: number, readAt: number, now = performance.now()): number | undefined {
  if (soonest.length < 2) return undefined;
  return Math.max(0, Number(soonest[1]) - nowMs - (now - readAt));
}
