// Follows the change log stream from a position. Reading and checking are one script
// (read-changes-1.lua: the entries after the position, or "the log no longer reaches back to it"), run
// on the store's main connection; when there is nothing new, an XREAD BLOCK on a dedicated connection
// waits for the next entries and returns them as soon as they are appended: a push, so a change reaches
// a follower one network delay after it was logged (not a wake-up plus another round trip, which over a
// WAN triples it).
//
// Each XREAD reads from `$` (what is appended once it waits) and goes in one pipeline behind
// `XREVRANGE + - COUNT 1`, the newest entry N just before it: Redis runs a client's pipelined commands back
// to back, so nothing is appended between the two. N equal to the follower's position: the XREAD's
// entries are exactly what follows it. N past the position: something was appended between two XREADs,
// so the script reads from the position (exact, as above). N before the position it had when the pair
// was sent: the log lost entries it held, so the follower re-reads a snapshot. Because each XREAD waits
// for what comes after whatever is newest when it runs, several can be queued on the connection (see
// QUEUED_READS): one always waits at Redis while the reply of the one before crosses the path.
//
// A held path (every byte held, the socket left open, as a WAN partition can look) never fails a read by
// itself, and a BLOCK of its own keeps the connection silent by design, so silence cannot be told from
// waiting for longer than the BLOCK. Hence a short BLOCK window (at most BLOCK_WINDOW_MS) whose reply is
// due within the window plus the command timeout, the same allowance every other command gets: a held
// path, or a frozen Redis, is noticed within the command timeout + BLOCK_WINDOW_MS of the hold starting,
// whatever the watch was doing then, and a slow but live path (a round trip under the command timeout)
// is never mistaken for one. An empty window costs one XREAD per window and no other command.
//
// Data replaced under traffic (FLUSHALL, a restore of an older copy) must not go unseen either: a blocked
// XREAD from `$` is served the recreated stream, whose ids are newer than the follower's position, and the
// XREVRANGE before it ran before the loss. So each pair also has two reads behind the XREAD, which Redis
// runs when the XREAD returns: the store's epoch (a flush removes it; a follower told the snapshot's epoch
// ends the watch when it differs: PositionLostError, and the snapshot read next finds the loss) and the
// entry at the position the read was sent at with the oldest entry of the log (that entry gone while the
// log still reaches back past it: not trimmed, replaced; StoreReplacedError). The region's own replicas
// follow their store the same way, so they notice as every follower does.
//
// An entry this version cannot read (garbage added by hand, a newer version's entry) is logged, counted
// and skipped, and the position moves past it like past any other (docs/contract.md §8).
import type { Logger } from 'pino';
import type { LeaseEvent } from '../types.js';
import { PositionLostError, StoreReplacedError, StoreUnavailableError, UNWRITTEN_EPOCH } from '../types.js';
import type { CommandRunner } from './command-runner.js';
import { waitUntilReady, withDeadline } from './command-runner.js';
import { openRedisClient, type RedisClient } from './connection.js';
import type { StoreKeys } from './keys.js';
import { MalformedReplyError, readEntry, type UnreadableEntry } from './replies.js';
import type { ReadScriptCommands, StreamEntryReply } from './scripts.js';
import { compareStreamIds } from './snapshot.js';
import type { RedisTarget } from './url.js';

/** A stream id, or "0-0" for "before the first entry". */
const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;
const BATCH = 500;
/**
 * The longest XREAD BLOCK: the bound on how much later than the command timeout a held path is noticed.
 * 150 ms leaves 100 ms of timer and event-loop slack under the 250 ms the design allows, for about
 * seven empty XREADs a second per idle follower (nothing for Redis).
 */
export const BLOCK_WINDOW_MS = 150;

export interface FollowChangesOptions {
  runner: CommandRunner;
  keys: StoreKeys;
  target: RedisTarget;
  commandTimeoutMs: number;
  logger: Logger;
  position: string;
  /** The epoch the position's snapshot read (UNWRITTEN_EPOCH: none); undefined: not checked. */
  epoch?: string;
  signal: AbortSignal;
  /** Awaited once the first read found the log still reaching back to the position (LeaseReader.watch). */
  reached?: () => Promise<void>;
  /** An entry this version cannot read: logged and counted, then skipped (see RedisSession). */
  skipUnreadable: (entry: UnreadableEntry) => void;
}

export async function* followChanges(options: FollowChangesOptions): AsyncGenerator<LeaseEvent, void, undefined> {
  const { runner, keys, signal } = options;
  if (!STREAM_ID.test(options.position)) throw new PositionLostError(options.position);
  let position = options.position;
  let reached = options.reached;
  const waker = new AppendWaker(options);
  // Opened beside the first read rather than when first needed: over a WAN its handshake takes a few
  // round trips, which would otherwise delay the first change after the log was caught up.
  waker.open();
  /** The events of `entries`, in order; the position moves past each. */
  function* events(entries: readonly StreamEntryReply[]): Generator<LeaseEvent> {
    for (const entry of entries) {
      if (signal.aborted) return;
      const event = readEntry(entry, options.skipUnreadable);
      // An unreadable entry is skipped, and the position moves past it all the same: what it would have
      // changed is one pool at most, and re-reading cannot make it readable (docs/contract.md §8).
      position = event?.position ?? entry[0];
      if (event) yield event;
    }
  }
  try {
    while (!signal.aborted) {
      const reply = await runner.run('read changes', (client) =>
        (client as RedisClient & ReadScriptCommands).poolscopeReadChanges(keys.changes, position, BATCH),
      );
      if (reply[0] === 0) throw new PositionLostError(position);
      if (reached) {
        await reached();
        reached = undefined;
      }
      yield* events(reply[1]);
      // A full batch may have more behind it: read on. Otherwise caught up as of this read: take what
      // comes next from the XREADs themselves, until one sees entries that came between two XREADs (or
      // a full batch), which the script reads.
      if (reply[1].length === BATCH) continue;
      while (!signal.aborted) {
        const pushed = await waker.waitForAppend(position);
        if (pushed.length === 0) break;
        yield* events(pushed);
        if (pushed.length === BATCH) break;
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  } finally {
    waker.close();
  }
}

/**
 * How many XREADs wait on the blocking connection at once (see waitForAppend). They run at Redis one after
 * another, a BLOCK window each (BLOCK_WINDOW_MS, which Redis ends on its next 100 ms tick), so Redis always
 * has one waiting while the path's round trip is below (QUEUED_READS - 1) × BLOCK_WINDOW_MS: about a
 * second, more than any ocean. Redis still runs one XREAD a window; the others wait in its input buffer.
 */
const QUEUED_READS = 8;

interface QueuedRead {
  /** The follower's position when it was sent: the log held it then. */
  sentAt: string;
  replies: Promise<[Error | null, unknown][] | null>;
}

/** The dedicated blocking connection; any failure ends it (and the follow). */
class AppendWaker {
  private client: RedisClient | undefined;
  /** Reads sent and not yet answered, oldest first. */
  private readonly queued: QueuedRead[] = [];
  private ready: Promise<RedisClient> | undefined;
  /** The BLOCK of each XREAD, ms. */
  private readonly windowMs: number;
  /** When the XREAD's reply is due: the window plus the command timeout. */
  private readonly replyDueMs: number;
  private readonly onAbort = () => this.client?.disconnect();

  constructor(private readonly options: FollowChangesOptions) {
    this.windowMs = blockWindowMs(options.commandTimeoutMs);
    this.replyDueMs = this.windowMs + options.commandTimeoutMs;
    options.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Starts connecting; a failure surfaces at the next waitForAppend. */
  open(): void {
    if (this.ready) return;
    this.ready = this.connect();
    this.ready.catch(() => {});
  }

  /**
   * The entries appended after `position`, once there are any (at most BATCH); none when the signal
   * aborts, or when entries came between two XREADs (then the caller reads them with the script, which
   * checks the position). Throws PositionLostError when the log lost entries the follower had read.
   */
  async waitForAppend(position: string): Promise<StreamEntryReply[]> {
    this.open();
    const client = await this.ready!;
    const { signal } = this.options;
    while (!signal.aborted) {
      while (this.queued.length < QUEUED_READS) this.queued.push(this.read(client, position));
      const head = this.queued.shift()!;
      let replies: [Error | null, unknown][] | null;
      try {
        replies = await withDeadline(head.replies, this.replyDueMs);
      } catch (error) {
        throw unavailable('waiting for changes', error);
      }
      const [[newestError, newest] = [null, null], [readError, read] = [null, null], [epochError, epoch] = [null, null], [atError, at] = [null, null], [oldestError, oldest] = [null, null]] =
        replies ?? [];
      const failed = newestError ?? readError ?? epochError ?? atError ?? oldestError;
      if (failed || replies === null) throw unavailable('waiting for changes', failed ?? new Error('pipeline discarded'));
      const newestId = newestIdOf(newest);
      if (compareStreamIds(newestId, head.sentAt) < 0) throw new StoreReplacedError(head.sentAt);
      // Read after the XREAD returned: the data it served is the snapshot's lifetime, and still holds the
      // entry the read was sent at, unless the log was trimmed past it.
      const expected = this.options.epoch;
      if (expected !== undefined && ((epoch as string | null) ?? UNWRITTEN_EPOCH) !== expected) throw new PositionLostError(head.sentAt);
      if (head.sentAt !== '0-0' && newestIdOf(at) === '0-0') {
        const oldestId = newestIdOf(oldest);
        if (oldestId !== '0-0' && compareStreamIds(oldestId, head.sentAt) > 0) throw new PositionLostError(head.sentAt);
        throw new StoreReplacedError(head.sentAt);
      }
      // Appended between two XREADs: read it with the script, which checks the position.
      if (compareStreamIds(newestId, position) > 0) return [];
      // null: the window passed with nothing new, and the reply proved the path alive.
      if (read === null) continue;
      // A read sent before the position moved may return what was already taken.
      const entries = entriesOf(read).filter(([id]) => compareStreamIds(id, position) > 0);
      if (entries.length > 0) return entries;
    }
    return [];
  }

  /** One XREAD BLOCK from `$`, behind the XREVRANGE that names the newest entry just before it. */
  private read(client: RedisClient, sentAt: string): QueuedRead {
    const { keys } = this.options;
    const replies = client
      .pipeline()
      .xrevrange(keys.changes, '+', '-', 'COUNT', 1)
      .xread('COUNT', BATCH, 'BLOCK', this.windowMs, 'STREAMS', keys.changes, '$')
      .get(keys.epoch)
      .xrange(keys.changes, sentAt, sentAt)
      .xrange(keys.changes, '-', '+', 'COUNT', 1)
      .exec();
    // A read still queued when the follow ends fails with the connection; nobody awaits it then.
    replies.catch(() => {});
    return { sentAt, replies };
  }

  close(): void {
    this.options.signal.removeEventListener('abort', this.onAbort);
    this.client?.disconnect();
    this.client = undefined;
  }

  private async connect(): Promise<RedisClient> {
    const { target, commandTimeoutMs, logger } = this.options;
    const client = openRedisClient({
      target,
      // ioredis's own bound on each reply, only a backstop: the reply awaited is bounded by withDeadline, and
      // a queued XREAD starts only when those before it returned (each a window, rounded up to Redis's
      // 100 ms tick), so its reply may come that much later than it was sent.
      commandTimeoutMs: this.replyDueMs + (this.windowMs + 100) * QUEUED_READS,
      reconnect: false,
      lazyConnect: true,
      disconnectTimeoutMs: 0,
      connectionName: 'poolscope:changes',
    });
    client.on('error', (error: Error) => logger.debug({ err: error.message }, 'change log connection error'));
    this.client = client;
    try {
      client.connect().catch(() => {});
      await withDeadline(waitUntilReady(client), commandTimeoutMs, 'not connected');
    } catch (error) {
      throw unavailable('connecting to follow changes', error);
    }
    return client;
  }
}

/** The id of an `XREVRANGE + - COUNT 1` reply's entry, "0-0" for an empty or missing stream. */
function newestIdOf(reply: unknown): string {
  if (!Array.isArray(reply)) throw new MalformedReplyError(`unexpected XREVRANGE reply: ${JSON.stringify(reply).slice(0, 200)}`);
  const id = (reply[0] as [unknown] | undefined)?.[0];
  return typeof id === 'string' ? id : '0-0';
}

/** The entries of an XREAD reply on one stream: [[stream, [[id, [field, value, ...]], ...]]]. */
function entriesOf(reply: unknown): StreamEntryReply[] {
  if (!Array.isArray(reply) || reply.length !== 1 || !Array.isArray(reply[0]) || !Array.isArray(reply[0][1])) {
    throw new MalformedReplyError(`unexpected XREAD reply: ${JSON.stringify(reply).slice(0, 200)}`);
  }
  return reply[0][1] as StreamEntryReply[];
}

/** Half the command timeout, at most BLOCK_WINDOW_MS, at least 1 ms (BLOCK 0 would block for ever). */
export function blockWindowMs(commandTimeoutMs: number): number {
  return Math.max(1, Math.min(BLOCK_WINDOW_MS, Math.floor(commandTimeoutMs / 2)));
}

function unavailable(what: string, error: unknown): StoreUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`redis store: ${what} failed: ${message}`, { cause: error });
}
