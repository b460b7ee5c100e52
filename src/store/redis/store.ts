// The Redis RegistrationStore: the home region's leases, shared by every replica of the region
// (docs/design.md "The store"). One hash per pool, expiring a backstop after its lease deadline; one sorted
// set of deadlines; one change log stream; the writers' stamp and the outages they lived through (the
// renewal window, docs/contract.md §9); all under the hash tag `{<prefix>}` (keys.ts). Every write is one
// Lua script that reads Redis TIME, so all replicas judge leases on one clock. Reads go through the same
// RedisLeaseReader a follower of another region uses (reader.ts), on this store's connection.
import type { Logger } from 'pino';
import { poolKey, type PoolKey, type Registration, type RouterRegistration } from '../../contract/index.js';
import { canonicalJson } from '../canonical-json.js';
import type {
  DueLapse,
  HeartbeatResult,
  LeaseEvent,
  RegistrationStore,
  RenewalWindowStatus,
  SnapshotParts,
  StoreSnapshot,
  StoreStats,
  SweepResult,
} from '../types.js';
import { RECONNECT_MAX_MS, type RedisClient } from './connection.js';
import type { LeaseKind } from './keys.js';
import { RECONNECT_MAX_READER_MS, RedisLeaseReader } from './reader.js';
import { OUTAGES_KEPT, STAMP_INTERVAL_MS, windowTiming, type WindowTiming } from './renewal-window.js';
import { parseDueReply } from './replies.js';
import { defineStoreScripts, type StoreScriptCommands } from './scripts.js';
import { openRedisSession, type RedisSession } from './session.js';

export const DEFAULT_CHANGE_LOG_CAP = 10_000;
/** Due leases lapsed per round trip; sweep() loops while a batch comes back full. */
const SWEEP_BATCH = 256;
/**
 * How long a pool's hash outlives its deadline in Redis: a lease a renewal window holds must still be read
 * whole (docs/contract.md §9), so this bounds the outages a window can cover (a day); the sweep removes
 * the hash when it lapses the lease, so only a region left without writers keeps hashes this long.
 */
export const REGISTRATION_BACKSTOP_MS = 86_400_000;
/** A sweep stamps when the last stamp is at least this old (sweeps may come every 10 ms while leases run out). */
const STAMP_EVERY_MS = STAMP_INTERVAL_MS / 4;

export interface RedisStoreOptions {
  /** redis://, rediss://, redis+sentinel://, redis+cluster:// (see url.ts). */
  url: string;
  /** Keys live under the hash tag `{<prefix>}`. */
  prefix: string;
  leaseMs: number;
  /**
   * The PoolRelays' heartbeat interval: with the command timeout, the renewal window after an outage.
   * Default: a third of the lease (the contract's 5 s of 15 s).
   */
  heartbeatIntervalMs?: number;
  /** Every store call answers or fails (StoreUnavailableError) within about this long. */
  commandTimeoutMs: number;
  logger: Logger;
  /** Change log entries kept (XADD MAXLEN ~; default 10,000). */
  changeLogCap?: number;
}

export function createRedisStore(options: RedisStoreOptions): RegistrationStore {
  return new RedisStore<Registration>(options, 'pools', poolKey);
}

/**
 * The router leases of the same Redis (docs/contract.md §10): the same scripts, lease rule, sweep and
 * renewal window as the pools', on keys of their own (keys.ts), keyed by the router's id.
 */
export function createRedisRouterStore(options: RedisStoreOptions): RegistrationStore<RouterRegistration> {
  return new RedisStore<RouterRegistration>(options, 'routers', (router) => router.id);
}

type ScriptedClient = RedisClient & StoreScriptCommands;

class RedisStore<R> implements RegistrationStore<R> {
  readonly kind = 'redis' as const;
  readonly forgetsOnRestart = false;
  private readonly session: RedisSession<ScriptedClient>;
  private readonly reader: RedisLeaseReader<R>;
  private readonly leaseMs: number;
  private readonly changeLogCap: number;
  private readonly timing: WindowTiming;
  /** Heartbeat interval + command timeout: the renewal window this writer records with an outage. */
  private readonly windowMs: number;
  /** The runner's failure count at this writer's last stamp: more since means it lived through failures. */
  private failuresAtStamp = 0;
  /** When this writer last stamped (performance.now()), undefined before its first stamp. */
  private stampedAt: number | undefined;
  /** This writer's last stamp on Redis's clock (ms), -1 before its first. */
  private lastStampMs = -1;
  /** How long after a recorded outage's end this writer may still extend it (stamp-5.lua). */
  private readonly extendMs: number;

  constructor(
    options: RedisStoreOptions,
    kind: LeaseKind,
    private readonly keyOf: (registration: R) => string,
  ) {
    if (!Number.isSafeInteger(options.leaseMs) || options.leaseMs <= 0) {
      throw new RangeError(`leaseMs must be a positive integer, got ${options.leaseMs}`);
    }
    this.leaseMs = options.leaseMs;
    this.changeLogCap = options.changeLogCap ?? DEFAULT_CHANGE_LOG_CAP;
    this.timing = windowTiming(options.commandTimeoutMs, options.leaseMs);
    this.windowMs = (options.heartbeatIntervalMs ?? Math.round(options.leaseMs / 3)) + options.commandTimeoutMs;
    // A writer's connection is opened again within its longest reconnect delay, then one command timeout.
    this.extendMs = RECONNECT_MAX_MS + options.commandTimeoutMs;
    this.session = openRedisSession({
      url: options.url,
      prefix: options.prefix,
      commandTimeoutMs: options.commandTimeoutMs,
      logger: options.logger,
      kind,
      connectionName: kind === 'pools' ? 'poolscope' : 'poolscope:routers',
      // Heartbeats from many PoolRelays arrive together: one write for all of a turn's scripts.
      autoPipelining: true,
      // A writer that lived through an outage extends its record to its own first stamp, and its PoolRelays'
      // window runs from then (docs/contract.md §9). Another writer (a replica started during the outage)
      // may get through first and record a window of interval + command timeout: this one must be back
      // within it, so it retries its connection at least every 0.25 s, as a reader does; at up to 2 s, the
      // first writer's sweeps lapsed the leases this one's PoolRelays were renewing.
      reconnectMaxMs: RECONNECT_MAX_READER_MS,
      defineScripts: defineStoreScripts,
    });
    // The home store creates the epoch when it is missing; a follower's reader only reads it.
    this.reader = new RedisLeaseReader<R>(this.session, 'create', options.leaseMs);
  }

  async heartbeat(registration: R, canonical?: string, knownVersion = 0): Promise<HeartbeatResult> {
    const key = this.keyOf(registration);
    const { runner, keys, client } = this.session;
    const changed = await runner.run('heartbeat', () =>
      client.poolscopeHeartbeat(
        keys.pool(key),
        keys.deadlines,
        keys.changes,
        keys.stamp,
        keys.outages,
        keys.gapRenewals,
        key,
        canonical ?? canonicalJson(registration),
        this.leaseMs,
        this.changeLogCap,
        REGISTRATION_BACKSTOP_MS,
        this.timing.staleMs,
        knownVersion,
      ),
    );
    return { key, leaseMs: this.leaseMs, changed: changed === 1 };
  }

  /** Stamps first: an outage this writer lived through is on record before it reads (stamp-5.lua). */
  async snapshot(onRead?: SnapshotParts<R>): Promise<StoreSnapshot<R>> {
    await this.stamp();
    return this.reader.snapshot(onRead);
  }

  renewalWindow(): Promise<RenewalWindowStatus> {
    return this.reader.renewalWindow();
  }

  watch(position: string, signal: AbortSignal, epoch?: string, reached?: () => Promise<void>): AsyncIterable<LeaseEvent<R>> {
    return this.reader.watch(position, signal, epoch, reached);
  }

  dueLapses(graceMs?: number): Promise<DueLapse[]> {
    return this.reader.dueLapses(graceMs);
  }

  /**
   * Finds due leases by Redis TIME and lapses each with a script that checks again (lapse-5.lua). The
   * soonest deadline left is read behind the last command, in the same round trip, and returned as a
   * duration on Redis's clock (from its TIME in the due reply), so the sweeper can come back just then.
   */
  async sweep(): Promise<SweepResult> {
    const { runner, keys, client } = this.session;
    let lapsed = 0;
    // The stamp goes first, on the same connection: an outage this writer lived through is recorded before
    // anything is lapsed, so its renewal window holds the leases that ran out in it (docs/contract.md §9).
    const stamped = performance.now() - (this.stampedAt ?? -Infinity) < STAMP_EVERY_MS && !this.failedSinceStamp();
    if (!stamped) await this.stamp();
    // A writer: the stale stamp rule never takes writers for gone (-1), since it is one.
    const writer = [this.timing.staleMs, -1, -1, 0] as const;
    for (;;) {
      // Lapsed members leave the set, so each batch starts from the soonest deadline again.
      const [reply, soonest] = await runner.run('sweep', () =>
        Promise.all([
          client.poolscopeDue(keys.deadlines, keys.stamp, keys.outages, SWEEP_BATCH, 0, '-inf', 0, ...writer),
          this.soonestDeadline(),
        ]),
      );
      const answeredAt = performance.now();
      const { nowMs, heldUntilMs, due } = parseDueReply(reply);
      // A soonest deadline that has passed and was not listed is held by a renewal window: every deadline
      // from the outage's start on is, so nothing lapses before the window runs out; come back then.
      const next = (held: readonly string[]) => {
        const dueIn = nextDueInMs(held, nowMs, answeredAt);
        return dueIn === 0 && heldUntilMs !== undefined ? Math.max(0, heldUntilMs - nowMs - (performance.now() - answeredAt)) : dueIn;
      };
      if (due.length === 0) return { lapsed, nextDueInMs: next(soonest) };
      // Sent together, so one batch costs one round trip; the soonest deadline is read after the lapses.
      const results = await runner.run('sweep', () =>
        Promise.all([Promise.all(due.map(({ key }) => this.lapse(key))), this.soonestDeadline()]),
      );
      lapsed += results[0].reduce((sum, result) => sum + result, 0);
      if (due.length < SWEEP_BATCH) return { lapsed, nextDueInMs: next(results[1]) };
    }
  }

  onAvailable(listener: () => void): () => void {
    return this.reader.onAvailable(listener);
  }

  private failedSinceStamp(): boolean {
    return this.session.runner.failures > this.failuresAtStamp;
  }

  /**
   * This writer says it can write (stamp-5.lua), reporting whether its commands failed since its last
   * stamp: if nobody stamped meanwhile either, the store answered no writer, and the outage is recorded.
   */
  private async stamp(): Promise<void> {
    const { runner, keys, client } = this.session;
    const failures = runner.failures;
    const failed = failures > this.failuresAtStamp ? 1 : 0;
    const [nowMs] = await runner.run('stamp', () =>
      client.poolscopeStamp(
        keys.stamp,
        keys.outages,
        ...keys.leaseDeadlines,
        keys.gapRenewals,
        failed,
        this.timing.staleMs,
        this.windowMs,
        OUTAGES_KEPT,
        this.lastStampMs,
        this.extendMs,
      ),
    );
    this.lastStampMs = Number(nowMs);
    this.failuresAtStamp = failures;
    this.stampedAt = performance.now();
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
    return client.poolscopeLapse(
      keys.pool(member),
      keys.deadlines,
      keys.changes,
      keys.stamp,
      keys.outages,
      member,
      this.changeLogCap,
      this.timing.staleMs,
    );
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
