// The Redis LeaseReader: follows a region's leases without ever writing (docs/design.md "Scale and regions").
// A replica reads every other region's Redis this way, possibly through a read-only replica of it placed
// in its own region: every command is a plain read or a script flagged no-writes, and the epoch key is
// read, never created. The home region's store (store.ts) reads through the same class, on its own
// read-write connection.
import type { Logger } from 'pino';
import type { DueLapse, LeaseEvent, LeaseReader, StoreSnapshot, StoreStats } from '../types.js';
import { withDeadline } from './command-runner.js';
import type { RedisClient } from './connection.js';
import { readDueLapses } from './due-lapses.js';
import { followChanges } from './follow-changes.js';
import { ReplicaLink } from './replica-link.js';
import { defineReadScripts, type ReadScriptCommands } from './scripts.js';
import { openRedisSession, type RedisSession } from './session.js';
import { readSnapshot, type EpochAccess } from './snapshot.js';

export interface RedisReaderOptions {
  /** redis://, rediss://, redis+sentinel://, redis+cluster:// (see url.ts); may name a read-only replica. */
  url: string;
  /** Keys live under the hash tag `{<prefix>}`: the region's own prefix. */
  prefix: string;
  /**
   * Every call answers or fails (StoreUnavailableError) within about this long; a held path is noticed
   * within it too (plus at most BLOCK_WINDOW_MS, 150 ms, in watch(): see follow-changes.ts). Must exceed
   * the round trip.
   */
  commandTimeoutMs: number;
  logger: Logger;
}

/** The longest wait between two connection attempts of a reader (0.1 s, then this, jittered). */
export const RECONNECT_MAX_READER_MS = 250;

/** A reader that never writes: for another region's Redis, or a read-only replica of it. */
export function createRedisReader(options: RedisReaderOptions): LeaseReader {
  const session = openRedisSession({
    ...options,
    connectionName: 'poolscope:reader',
    // A follower sends a handful of commands a second: nothing to batch.
    autoPipelining: false,
    // A cut-off region's pools return within about a second of its Redis answering again
    // (docs/contract.md §7), so a reader retries its connection at least every 0.25 s: on a path that
    // holds bytes each attempt waits out a command timeout anyway, and where Redis refuses, a refused
    // connect costs it nothing.
    reconnectMaxMs: RECONNECT_MAX_READER_MS,
    defineScripts: defineReadScripts,
  });
  return new RedisLeaseReader(session, 'read');
}

export class RedisLeaseReader implements LeaseReader {
  readonly kind = 'redis' as const;
  readonly forgetsOnRestart = false;
  /** Aborts every watch on close(). */
  private readonly closing = new AbortController();
  private readonly replicaLink = new ReplicaLink();

  constructor(
    private readonly session: RedisSession<RedisClient & ReadScriptCommands>,
    private readonly epoch: EpochAccess,
  ) {}

  /** Consistent with its position without blocking Redis: see snapshot.ts. */
  snapshot(): Promise<StoreSnapshot> {
    const { runner, keys, skipUnreadable } = this.session;
    return readSnapshot({ runner, keys, epoch: this.epoch, replicaLink: this.replicaLink, skipUnreadable });
  }

  watch(position: string, signal: AbortSignal): AsyncIterable<LeaseEvent> {
    const { runner, keys, target, commandTimeoutMs, logger, skipUnreadable } = this.session;
    return followChanges({
      runner,
      keys,
      target,
      commandTimeoutMs,
      logger,
      skipUnreadable,
      position,
      signal: AbortSignal.any([signal, this.closing.signal]),
    });
  }

  /** Judged on Redis TIME, read-only; see due-lapses.ts for paging. */
  dueLapses(graceMs = 0): Promise<DueLapse[]> {
    const { runner, keys } = this.session;
    return readDueLapses({ runner, keys, replicaLink: this.replicaLink, graceMs });
  }

  onAvailable(listener: () => void): () => void {
    return this.session.runner.onAvailable(listener);
  }

  stats(): StoreStats {
    return { ...this.session.stats };
  }

  async close(): Promise<void> {
    this.closing.abort();
    const { client, commandTimeoutMs } = this.session;
    // QUIT lets replies in flight arrive; a Redis that does not answer is not waited for.
    await withDeadline(client.quit(), commandTimeoutMs).catch(() => {});
    client.disconnect();
  }
}
