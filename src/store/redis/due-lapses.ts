// The leases that have run out on a region's Redis clock, read without lapsing them: a follower of another
// region treats them as lapsed there even when none of that region's replicas is left to sweep
// (docs/design.md "Scale and regions", remote deadlines). The renewal window applies (due-3.lua): a lease
// that ran out during an outage of the store, or within a window after it, is not listed before its window
// ran (docs/contract.md §9). Read only: due-3.lua is flagged no-writes, so this works on a read-only
// replica too.
import type { DueLapse } from '../types.js';
import type { CommandRunner } from './command-runner.js';
import type { RedisClient } from './connection.js';
import type { StoreKeys } from './keys.js';
import type { ReaderContinuity } from './renewal-window.js';
import type { ReplicaLink } from './replica-link.js';
import { parseDueReply } from './replies.js';
import type { ReadScriptCommands } from './scripts.js';

/**
 * Due leases per command: one page keeps each script call short (about 10 ms of Redis time for 10,000
 * members). dueLapses() reads page after page until one comes back short, so it returns every due lease,
 * however many (a region whose replicas all stopped has its whole pool list due at once).
 */
export const DUE_LAPSES_PAGE = 10_000;

export interface ReadDueLapsesOptions {
  runner: CommandRunner;
  keys: StoreKeys;
  replicaLink: ReplicaLink;
  /** The reader's unbroken reading of the store (moved on by each page). */
  continuity: ReaderContinuity;
  /** Only leases whose deadline is at least this far in the past (ms). */
  graceMs: number;
  /** Keys per page (tests use small pages). */
  pageSize?: number;
}

type ReadClient = RedisClient & ReadScriptCommands;

/**
 * Soonest deadline first. Each page resumes at the last deadline the one before it returned, past the
 * keys at that deadline it already listed, and is judged on Redis's clock when it runs, so a later page
 * may hold leases that ran out while the earlier ones were read. A lease removed between two pages
 * (lapsed by a sweep, renewed) may shift another past the page boundary and leave it out of this call;
 * it is in the next call if it is still due, and a lapse swept meanwhile is in the change log. Nothing
 * is listed twice: a renewal moves a deadline past every cutoff, never into an earlier page.
 */
export async function readDueLapses(options: ReadDueLapsesOptions): Promise<DueLapse[]> {
  const { runner, keys, replicaLink, continuity, graceMs } = options;
  const pageSize = options.pageSize ?? DUE_LAPSES_PAGE;
  if (!(graceMs >= 0 && Number.isFinite(graceMs))) throw new RangeError(`graceMs must be a finite number >= 0, got ${graceMs}`);
  const grace = Math.floor(graceMs);
  const lapses: DueLapse[] = [];
  let from = '-inf';
  let skip = 0;
  for (let first = true; ; first = false) {
    const page = (client: RedisClient) =>
      (client as ReadClient).poolscopeDue(keys.deadlines, keys.stamp, keys.outages, pageSize, grace, from, skip, ...continuity.args());
    // The replica check rides along with the first page: no round trip of its own.
    const [reply, link] = await runner.run('due lapses', async (client) =>
      first ? Promise.all([page(client), replicaLink.check(client)]) : Promise.all([page(client), undefined]),
    );
    const { nowMs, readSinceMs, due } = parseDueReply(reply);
    continuity.read(nowMs, readSinceMs);
    // A read replica not proven current: its due deadlines may have been renewed on its master since.
    if (link?.proven === false) {
      continuity.gap();
      return [];
    }
    for (const { key, atMs } of due) lapses.push({ key, atMs });
    if (due.length < pageSize) return lapses;
    // Resume at the last deadline, past the members at it already listed (several may share one).
    const last = due[due.length - 1]!.score;
    const atLast = due.filter((lapse) => lapse.score === last).length;
    skip = last === from ? skip + atLast : atLast;
    from = last;
  }
}
