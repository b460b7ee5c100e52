// Whether the Redis a reader talks to serves current data. A read replica whose link to its master is down
// serves the data of the moment the link broke while its own clock runs on: every lease would seem to
// run out (due in dueLapses, its hash expired in a snapshot) although its PoolRelays may be renewing it
// on the master. Such a replica is unreadable, like a region that cannot be reached: the follower holds
// the region's pools for a while instead of lapsing them all (docs/contract.md §7).
import type { RedisClient } from './connection.js';

export class StaleReplicaError extends Error {
  override readonly name = 'StaleReplicaError';
}

export class ReplicaLink {
  /** Set when ROLE is refused (an ACL or a managed Redis that hides it): then the check cannot be made. */
  private unsupported = false;

  /**
   * Resolves when the server is a master, or a replica whose link to its master is up; rejects with
   * StaleReplicaError otherwise. Sent beside another command, it costs no round trip of its own.
   */
  async check(client: RedisClient): Promise<void> {
    if (this.unsupported) return;
    let role: unknown[];
    try {
      role = (await client.role()) as unknown[];
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ReplyError')) throw error;
      this.unsupported = true;
      return;
    }
    // A replica answers ['slave', host, port, state, offset]; only 'connected' means it is in sync.
    const [kind, host, port, state] = role;
    if (kind === 'slave' && state !== 'connected') {
      throw new StaleReplicaError(`the read replica's link to its master ${String(host)}:${String(port)} is ${String(state)}: its data is stale`);
    }
  }
}
