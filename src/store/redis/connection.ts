// Opens ioredis clients for a parsed --redis-url. Every client fails fast: no offline queue (a command
// issued while disconnected is refused at once instead of piling up for a Redis that may never come
// back), no resending of commands that were in flight when the connection dropped, and every command
// bounded by the command timeout. Reconnection is ioredis's own, on a short backoff (0.1 s doubling to
// 2 s, jittered): a connection is dropped as soon as it is found dead, so the next one must come soon
// (docs/design.md "The store"). Through Sentinel every reconnection asks the sentinels for the master.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { Backoff } from '../../util/backoff.js';
import type { RedisTarget } from './url.js';

export type RedisClient = Redis | Cluster;

export interface OpenRedisClientOptions {
  target: RedisTarget;
  /** Bound on every command's reply, ms (and on connecting). */
  commandTimeoutMs: number;
  /**
   * false: ioredis sets no timeout of its own on each command. Its timeout runs from the moment a command
   * is written, so a pipelined read waiting its turn behind megabytes of replies on a slow link would
   * time out while the link is busy; a caller that bounds every command itself (CommandRunner: from when
   * the reply ahead arrived) turns it off. A dead connection is still dropped: by `socketTimeoutMs` and
   * by the runner. Default true.
   */
  ioredisCommandTimeout?: boolean;
  /**
   * A connection that receives no byte for this long while a reply is owed is dead: it is dropped and
   * (with `reconnect`) opened again. This is what notices a half-open path (a WAN partition that holds
   * every byte and leaves the socket open), which TCP itself would take minutes to give up on; a command
   * timeout alone would fail every command on that socket forever. Unset: never (a blocking XREAD
   * connection, silent by design while it blocks).
   */
  socketTimeoutMs?: number;
  /**
   * true: reconnect after a loss, 0.1 s doubling to `reconnectMaxMs` with jitter. false: a loss ends the
   * client for good (the change log follower opens a fresh one and re-checks its position instead).
   */
  reconnect: boolean;
  /** The longest reconnect delay (default RECONNECT_MAX_MS, 2 s). */
  reconnectMaxMs?: number;
  /** Connect on the first command or connect() rather than at once. */
  lazyConnect?: boolean;
  /**
   * How long disconnect() waits for Redis to close the socket after ours is ended before destroying it
   * (ioredis's default, 2 s, when unset). The change log follower gives 0: Redis leaves the socket of a
   * client blocked in XREAD open until the block ends, and the reads in flight owe nothing worth waiting
   * for, so waiting would only keep a stopping process alive.
   */
  disconnectTimeoutMs?: number;
  /** CLIENT SETNAME, to tell poolscope's connections apart in CLIENT LIST. */
  connectionName: string;
  /**
   * Send the commands of one event-loop turn in one write (ioredis auto-pipelining). Safe on a Cluster
   * here: every key shares one hash tag, so a pipeline never spans slots.
   */
  autoPipelining?: boolean;
}

export function openRedisClient(options: OpenRedisClientOptions): RedisClient {
  const { target } = options;
  const retryStrategy = options.reconnect ? reconnectDelays(Math.random, options.reconnectMaxMs) : () => null;
  const perConnection = {
    commandTimeout: options.ioredisCommandTimeout === false ? undefined : options.commandTimeoutMs,
    connectTimeout: Math.max(options.commandTimeoutMs, 1000),
    autoResendUnfulfilledCommands: false,
    // Rejects what was in flight as soon as the connection drops, instead of after N reconnects.
    maxRetriesPerRequest: 0,
    connectionName: options.connectionName,
    username: target.credentials.username,
    password: target.credentials.password,
    tls: target.tls ? {} : undefined,
    enableAutoPipelining: options.autoPipelining ?? false,
    socketTimeout: options.socketTimeoutMs,
    disconnectTimeout: options.disconnectTimeoutMs,
  } satisfies RedisOptions;

  switch (target.kind) {
    case 'standalone':
      return new Redis({
        ...perConnection,
        host: target.address.host,
        port: target.address.port,
        db: target.db,
        enableOfflineQueue: false,
        retryStrategy,
        lazyConnect: options.lazyConnect ?? false,
      });
    case 'sentinel':
      return new Redis({
        ...perConnection,
        sentinels: target.sentinels,
        name: target.masterName,
        db: target.db,
        enableTLSForSentinelMode: target.tls,
        sentinelCommandTimeout: options.commandTimeoutMs,
        enableOfflineQueue: false,
        retryStrategy,
        lazyConnect: options.lazyConnect ?? false,
      });
    case 'cluster':
      return new Cluster(target.nodes, {
        redisOptions: perConnection,
        enableAutoPipelining: options.autoPipelining ?? false,
        enableOfflineQueue: false,
        clusterRetryStrategy: retryStrategy,
        slotsRefreshTimeout: Math.max(options.commandTimeoutMs, 1000),
        lazyConnect: options.lazyConnect ?? false,
      });
  }
}

/** The longest wait between two reconnection attempts of a store's connection. */
export const RECONNECT_MAX_MS = 2000;
/** The first reconnection attempt after a loss comes this soon (plus jitter). */
const RECONNECT_FIRST_MS = 100;

/**
 * ioredis counts attempts from 1 after each successful connection; the delays restart with it. 0.1 s
 * doubling to `maxMs` (default 2 s), jittered (below the cap once there, so replicas spread out).
 */
export function reconnectDelays(random: () => number = Math.random, maxMs = RECONNECT_MAX_MS): (attempt: number) => number {
  const backoff = new Backoff({ random, initialMs: Math.min(RECONNECT_FIRST_MS, maxMs), maxMs, jitterBelowCap: true });
  return (attempt) => {
    if (attempt <= 1) backoff.reset();
    return backoff.next();
  };
}
