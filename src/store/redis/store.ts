// The Redis RegistrationStore: leases shared by every replica (DESIGN.md "The store"). One hash per pool,
// one sorted set of deadlines, one change log stream, all under the hash tag `{<prefix>}` (keys.ts);
// every write is one Lua script that reads Redis TIME, so all replicas judge leases on one clock.
import type { Logger } from 'pino';
import { poolKey, type PoolKey, type Registration } from '../../contract/index.js';
import { canonicalJson } from '../canonical-json.js';
import type { HeartbeatResult, LeaseEvent, RegistrationStore, StoreSnapshot } from '../types.js';
import { CommandRunner, withDeadline } from './command-runner.js';
import { openRedisClient, type RedisClient } from './connection.js';
import { followChanges } from './follow-changes.js';
import { createStoreKeys, type StoreKeys } from './keys.js';
import { defineStoreScripts, type StoreScriptCommands } from './scripts.js';
import { readSnapshot } from './snapshot.js';
import { describeRedisTarget, parseRedisUrl, type RedisTarget } from './url.js';

export const DEFAULT_CHANGE_LOG_CAP = 10_000;
/** Due leases lapsed per round trip; sweep() loops while a batch comes back full. */
const SWEEP_BATCH = 256;
/** The pool hash outlives its lease by this factor: garbage collection only, never liveness. */
const GC_LEASES = 4;

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
  private readonly target: RedisTarget;
  private readonly keys: StoreKeys;
  private readonly client: ScriptedClient;
  private readonly runner: CommandRunner;
  private readonly leaseMs: number;
  private readonly changeLogCap: number;
  /** Aborts every watch on close(). */
  private readonly closing = new AbortController();

  constructor(private readonly options: RedisStoreOptions) {
    if (!Number.isSafeInteger(options.leaseMs) || options.leaseMs <= 0) {
      throw new RangeError(`leaseMs must be a positive integer, got ${options.leaseMs}`);
    }
    this.leaseMs = options.leaseMs;
    this.changeLogCap = options.changeLogCap ?? DEFAULT_CHANGE_LOG_CAP;
    this.target = parseRedisUrl(options.url);
    this.keys = createStoreKeys(options.prefix);
    const description = describeRedisTarget(this.target);
    this.client = defineStoreScripts(
      openRedisClient({
        target: this.target,
        commandTimeoutMs: options.commandTimeoutMs,
        reconnect: true,
        connectionName: 'poolscope',
        // Heartbeats from many PoolRelays arrive together: one write for all of a turn's scripts.
        autoPipelining: true,
      }),
    ) as ScriptedClient;
    // Without a listener, ioredis's connection errors would be unhandled 'error' events; the runner logs
    // what matters (each change of availability) from the commands' outcomes.
    this.client.on('error', (error: Error) => options.logger.debug({ err: error.message }, 'redis connection error'));
    this.runner = new CommandRunner({
      client: this.client,
      commandTimeoutMs: options.commandTimeoutMs,
      logger: options.logger,
      description,
    });
  }

  async heartbeat(registration: Registration): Promise<HeartbeatResult> {
    const key = poolKey(registration);
    const poolHash = this.keys.pool(key);
    const [changed] = await this.runner.run('heartbeat', () =>
      this.client.poolscopeHeartbeat(
        poolHash,
        this.keys.deadlines,
        this.keys.changes,
        key,
        canonicalJson(registration),
        this.leaseMs,
        this.leaseMs * GC_LEASES,
        this.changeLogCap,
      ),
    );
    return { key, leaseMs: this.leaseMs, changed: changed === 1 };
  }

  /** Consistent with its position without blocking Redis: see snapshot.ts. */
  snapshot(): Promise<StoreSnapshot> {
    return readSnapshot({ runner: this.runner, keys: this.keys });
  }

  watch(position: string, signal: AbortSignal): AsyncIterable<LeaseEvent> {
    return followChanges({
      runner: this.runner,
      keys: this.keys,
      target: this.target,
      commandTimeoutMs: this.options.commandTimeoutMs,
      logger: this.options.logger,
      position,
      signal: AbortSignal.any([signal, this.closing.signal]),
    });
  }

  /** Finds due leases by Redis TIME and lapses each with a script that checks again (lapse-3.lua). */
  async sweep(): Promise<number> {
    let lapsed = 0;
    for (;;) {
      const due = await this.runner.run('sweep', () => this.client.poolscopeDue(this.keys.deadlines, SWEEP_BATCH));
      if (due.length === 0) return lapsed;
      // Sent together, so one batch costs one round trip.
      const results = await this.runner.run('sweep', () => Promise.all(due.map((member) => this.lapse(member))));
      lapsed += results.reduce((sum, result) => sum + result, 0);
      if (due.length < SWEEP_BATCH) return lapsed;
    }
  }

  async close(): Promise<void> {
    this.closing.abort();
    // QUIT lets replies in flight arrive; a Redis that does not answer is not waited for.
    await withDeadline(this.client.quit(), this.options.commandTimeoutMs).catch(() => {});
    this.client.disconnect();
  }

  private lapse(member: PoolKey): Promise<number> {
    return this.client.poolscopeLapse(this.keys.pool(member), this.keys.deadlines, this.keys.changes, member, this.changeLogCap);
  }
}
