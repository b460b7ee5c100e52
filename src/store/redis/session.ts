// One Redis connection of the store with what every command on it needs: the parsed target, the keys,
// the scripts defined on the client and the runner that bounds each command. The home region's store
// and a follower's reader each open one (with the scripts they may run) and share everything else.
import type { Logger } from 'pino';
import type { StoreStats } from '../types.js';
import { CommandRunner } from './command-runner.js';
import { openRedisClient, type RedisClient } from './connection.js';
import { createStoreKeys, type LeaseKind, type StoreKeys } from './keys.js';
import type { UnreadableEntry } from './replies.js';
import { describeRedisTarget, parseRedisUrl, type RedisTarget } from './url.js';

export interface RedisSessionOptions<C extends RedisClient> {
  /** redis://, rediss://, redis+sentinel://, redis+cluster:// (see url.ts). */
  url: string;
  /** Keys live under the hash tag `{<prefix>}`. */
  prefix: string;
  /** Whose leases: pools (default) or routers, each under keys of their own (keys.ts). */
  kind?: LeaseKind;
  /** Every call answers or fails (StoreUnavailableError) within about this long. */
  commandTimeoutMs: number;
  logger: Logger;
  /** CLIENT SETNAME, to tell the store's connections from a reader's in CLIENT LIST. */
  connectionName: string;
  /** See OpenRedisClientOptions.autoPipelining. */
  autoPipelining: boolean;
  /** The longest reconnect delay (default 2 s, RECONNECT_MAX_MS). */
  reconnectMaxMs?: number;
  /** See CommandRunnerOptions.timeFromTurn. */
  timeFromTurn?: boolean;
  /** defineStoreScripts or defineReadScripts: which scripts this connection may run. */
  defineScripts: (client: RedisClient) => C;
}

export interface RedisSession<C extends RedisClient> {
  readonly target: RedisTarget;
  /** How the store names its Redis in logs (no credentials). */
  readonly description: string;
  readonly keys: StoreKeys;
  readonly client: C;
  readonly runner: CommandRunner;
  readonly commandTimeoutMs: number;
  readonly logger: Logger;
  /** Counted on this session's connection and by what reads through it. */
  readonly stats: StoreStats;
  /** An entry this version cannot read was skipped: log it (warn) and count it (docs/contract.md §8). */
  skipUnreadable(entry: UnreadableEntry): void;
}

export function openRedisSession<C extends RedisClient>(options: RedisSessionOptions<C>): RedisSession<C> {
  const { commandTimeoutMs, logger } = options;
  if (!(commandTimeoutMs > 0 && Number.isFinite(commandTimeoutMs))) {
    throw new RangeError(`commandTimeoutMs must be a positive number, got ${commandTimeoutMs}`);
  }
  const target = parseRedisUrl(options.url);
  const keys = createStoreKeys(options.prefix, options.kind);
  const description = describeRedisTarget(target);
  const client = options.defineScripts(
    openRedisClient({
      target,
      commandTimeoutMs,
      // A connection silent for a whole command timeout while replies are owed is a held path: drop it
      // and reconnect, so the store works again as soon as the path does (docs/design.md "Scale and regions").
      socketTimeoutMs: commandTimeoutMs,
      // Every command goes through the runner, which bounds it (a pipelined read from when the reply
      // ahead of it arrived): ioredis's own timeout, from the moment of sending, would not let it wait its turn.
      ioredisCommandTimeout: false,
      reconnect: true,
      reconnectMaxMs: options.reconnectMaxMs,
      connectionName: options.connectionName,
      autoPipelining: options.autoPipelining,
    }),
  );
  // Without a listener, ioredis's connection errors would be unhandled 'error' events; the runner logs
  // what matters (each change of availability) from the commands' outcomes.
  client.on('error', (error: Error) => logger.debug({ err: error.message }, 'redis connection error'));
  const stats: StoreStats = { reconnects: 0, unreadableEntries: 0 };
  // ioredis emits 'reconnecting' once per attempt it schedules after a connection was lost or dropped.
  client.on('reconnecting', () => {
    stats.reconnects += 1;
  });
  const runner = new CommandRunner({ client, commandTimeoutMs, logger, description, timeFromTurn: options.timeFromTurn });
  const skipUnreadable = (entry: UnreadableEntry) => {
    stats.unreadableEntries += 1;
    if ('streamId' in entry) {
      logger.warn({ redis: description, stream_id: entry.streamId, err: entry.err }, 'unreadable change log entry skipped');
    } else {
      logger.warn({ redis: description, pool: entry.pool, err: entry.err }, 'unreadable pool entry skipped');
    }
  };
  return { target, description, keys, client, runner, commandTimeoutMs, logger, stats, skipUnreadable };
}
