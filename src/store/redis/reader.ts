// The Redis LeaseReader: follows a region's leases without ever writing (docs/design.md "Scale and regions").
// A replica reads every other region's Redis this way, possibly through a read-only replica of it placed
// in its own region: every command is a plain read or a script flagged no-writes, and the epoch key is
// read, never created. The home region's store (store.ts) reads through the same class, on its own
// read-write connection.
import type { Logger } from 'pino';
import type { Registration, RouterRegistration } from '../../contract/index.js';
import type { DueLapse, LeaseEvent, LeaseReader, RenewalWindowStatus, SnapshotParts, StoreSnapshot, StoreStats } from '../types.js';
import { withDeadline } from './command-runner.js';
import type { RedisClient } from './connection.js';
import { readDueLapses } from './due-lapses.js';
import { followChanges } from './follow-changes.js';
import { parseWindowReply, ReaderContinuity, windowTiming } from './renewal-window.js';
import type { LeaseKind } from './keys.js';
import { ReplicaLink } from './replica-link.js';
import { defineReadScripts, type ReadScriptCommands } from './scripts.js';
import { openRedisSession, type RedisSession } from './session.js';
import type { PoolWeight } from './read-pipeline.js';
import { readSnapshot, type EpochAccess } from './snapshot.js';

export interface RedisReaderOptions {
  /** redis://, rediss://, redis+sentinel://, redis+cluster:// (see url.ts); may name a read-only replica. */
  url: string;
  /** Keys live under the hash tag `{<prefix>}`: the region's own prefix. */
  prefix: string;
  /** Whose leases to follow: pools (default) or routers (keys.ts). */
  kind?: LeaseKind;
  /**
   * Every call answers or fails (StoreUnavailableError) within about this long; a held path is noticed
   * within it too (plus at most BLOCK_WINDOW_MS, 150 ms, in watch(): see follow-changes.ts). Must exceed
   * the round trip.
   */
  commandTimeoutMs: number;
  logger: Logger;
  /**
   * The lease (ms) of the region's writers, as configured here: writers silent for lease + 2 s while this
   * reader read the store throughout are gone (docs/contract.md §9, "Not an outage"). Default 15 s.
   */
  leaseMs?: number;
}

/** The contract's default lease, for a reader told no other. */
const DEFAULT_LEASE_MS = 15_000;

/** The longest wait between two connection attempts of a reader (0.1 s, then this, jittered). */
export const RECONNECT_MAX_READER_MS = 250;

/** A reader that never writes: for another region's Redis, or a read-only replica of it. */
export function createRedisReader(options: RedisReaderOptions & { kind?: 'pools' }): LeaseReader;
export function createRedisReader(options: RedisReaderOptions & { kind: 'routers' }): LeaseReader<RouterRegistration>;
export function createRedisReader(options: RedisReaderOptions): LeaseReader<Registration> | LeaseReader<RouterRegistration> {
  const session = openRedisSession({
    ...options,
    connectionName: options.kind === 'routers' ? 'poolscope:reader:routers' : 'poolscope:reader',
    // A follower sends a handful of commands a second: nothing to batch.
    autoPipelining: false,
    // A cut-off region's pools return within about a second of its Redis answering again
    // (docs/contract.md §7), so a reader retries its connection at least every 0.25 s: on a path that
    // holds bytes each attempt waits out a command timeout anyway, and where Redis refuses, a refused
    // connect costs it nothing.
    reconnectMaxMs: RECONNECT_MAX_READER_MS,
    // Its due reads and window reads share the connection with a snapshot's pipelined reads; over a slow
    // link they wait their turn behind them, and are timed from it (docs/design.md "Snapshots that scale
    // with bytes").
    timeFromTurn: true,
    defineScripts: defineReadScripts,
  });
  return new RedisLeaseReader<unknown>(session, 'read', options.leaseMs ?? DEFAULT_LEASE_MS) as LeaseReader<Registration> & LeaseReader<RouterRegistration>;
}

/**
 * `R` is what the leases hold (a pool's or a router's registration): read back as the JSON that was
 * stored, as written by a heartbeat that checked it; whoever lists them checks the shape again.
 */
export class RedisLeaseReader<R = Registration> implements LeaseReader<R> {
  readonly kind = 'redis' as const;
  readonly forgetsOnRestart = false;
  /** Aborts every watch on close(). */
  private readonly closing = new AbortController();
  private readonly replicaLink: ReplicaLink;
  private readonly continuity: ReaderContinuity;
  /** What this store's pools weighed in the snapshots read so far: sizes the next one's reads. */
  private readonly weight: PoolWeight = { pools: 0, bytes: 0 };

  constructor(
    private readonly session: RedisSession<RedisClient & ReadScriptCommands>,
    private readonly epoch: EpochAccess,
    leaseMs: number,
  ) {
    const timing = windowTiming(session.commandTimeoutMs, leaseMs);
    this.continuity = new ReaderContinuity(timing);
    this.replicaLink = new ReplicaLink(timing.staleMs);
  }

  /** Consistent with its position without blocking Redis: see snapshot.ts. */
  snapshot(onRead?: SnapshotParts<R>): Promise<StoreSnapshot<R>> {
    const { runner, keys, skipUnreadable } = this.session;
    const { replicaLink, continuity, weight } = this;
    // The registration is the stored JSON, whatever its kind (see the class's note).
    return readSnapshot({ runner, keys, epoch: this.epoch, replicaLink, continuity, skipUnreadable, weight, onRead: onRead as SnapshotParts | undefined }) as Promise<StoreSnapshot<unknown>> as Promise<
      StoreSnapshot<R>
    >;
  }

  /** The last outage the region's writers recorded, and whether its window is open (window-2.lua). */
  async renewalWindow(): Promise<RenewalWindowStatus> {
    const { runner, keys } = this.session;
    const [reply, link] = await runner.run('renewal window', (client) =>
      Promise.all([
        (client as RedisClient & ReadScriptCommands).poolscopeWindow(keys.stamp, keys.outages, ...this.continuity.args()),
        this.replicaLink.check(client),
      ]),
    );
    const window = parseWindowReply(reply);
    this.continuity.read(window.status.nowMs, window.readSinceMs);
    if (!link.proven) this.continuity.gap();
    return window.status;
  }

  watch(position: string, signal: AbortSignal, epoch?: string, reached?: () => Promise<void>): AsyncIterable<LeaseEvent<R>> {
    const { runner, keys, target, commandTimeoutMs, logger, skipUnreadable } = this.session;
    return followChanges({
      epoch,
      reached,
      runner,
      keys,
      target,
      commandTimeoutMs,
      logger,
      skipUnreadable,
      position,
      signal: AbortSignal.any([signal, this.closing.signal]),
    }) as AsyncIterable<LeaseEvent<unknown>> as AsyncIterable<LeaseEvent<R>>;
  }

  /** Judged on Redis TIME, read-only; see due-lapses.ts for paging. */
  dueLapses(graceMs = 0): Promise<DueLapse[]> {
    const { runner, keys } = this.session;
    return readDueLapses({ runner, keys, replicaLink: this.replicaLink, continuity: this.continuity, graceMs });
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
