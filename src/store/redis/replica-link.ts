// Whether the Redis a reader talks to serves current data. A read replica whose link to its master is down
// serves the data of the moment the link broke while its own clock runs on: every lease would seem to
// run out (due in dueLapses, its hash expired in a snapshot) although its PoolRelays may be renewing it
// on the master. So does a replica whose link is up in name only: a WAN path that holds bytes leaves the
// link `connected` until the replica's `repl-timeout` (60 s by default) while nothing arrives. Staleness is
// therefore measured, not assumed: `INFO replication`'s `master_last_io_seconds_ago` (how long since the
// replica last heard from its master; the region's writers stamp every second, and the master pings its
// replicas every `repl-ping-replica-period`) against the stale bound of the writers' stamp.
// - Silent for longer than the stale bound, or the link down: StaleReplicaError. The reader fails like a
//   region that cannot be reached: the follower holds the region's pools instead of lapsing them, drops
//   them after its hold, and reads a new snapshot when the replica is current again (docs/contract.md §7).
// - Silent for less, but not proven current within the stale bound (the silence is counted in whole
//   seconds): the read is not evidence that the region's writers are gone, so nothing is lapsed from it
//   (`proven: false`, see due-lapses.ts and snapshot.ts).
import type { RedisClient } from './connection.js';
import { StaleDataError } from '../types.js';

export class StaleReplicaError extends StaleDataError {
  override readonly name = 'StaleReplicaError';
}

/** What a read learned of the server's data. */
export interface LinkState {
  /** A master, or a replica that heard from its master within the stale bound (whole seconds counted up). */
  proven: boolean;
}

const CURRENT: LinkState = { proven: true };

export class ReplicaLink {
  /** Set when INFO is refused (an ACL or a managed Redis that hides it): then the check cannot be made. */
  private unsupported = false;

  /** @param staleMs the writers' stamp is stale past this (renewal-window.ts): the bound on a replica's silence. */
  constructor(private readonly staleMs: number) {}

  /**
   * Resolves with the link's state when the server is a master, or a replica whose link to its master is
   * up and heard from within the stale bound; rejects with StaleReplicaError otherwise. Sent beside another
   * command, it costs no round trip of its own.
   */
  async check(client: RedisClient): Promise<LinkState> {
    if (this.unsupported) return CURRENT;
    let info: string;
    try {
      info = await client.info('replication');
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ReplyError')) throw error;
      this.unsupported = true;
      return CURRENT;
    }
    const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
    if (field('role') !== 'slave') return CURRENT;
    const master = `${field('master_host') ?? '?'}:${field('master_port') ?? '?'}`;
    const status = field('master_link_status');
    if (status !== 'up') {
      throw new StaleReplicaError(`the read replica's link to its master ${master} is ${status ?? 'unknown'}: its data is stale`);
    }
    const silentSeconds = Number(field('master_last_io_seconds_ago'));
    if (!Number.isFinite(silentSeconds) || silentSeconds < 0) return { proven: false };
    if (silentSeconds * 1000 > this.staleMs) {
      throw new StaleReplicaError(
        `the read replica heard nothing from its master ${master} for ${silentSeconds} s (more than ${this.staleMs} ms): its data is stale`,
      );
    }
    // Counted in whole seconds: heard from at most silentSeconds + 1 s ago.
    return { proven: (silentSeconds + 1) * 1000 <= this.staleMs };
  }
}
