// Follows the change log stream from a position. Reading and checking are one script
// (read-changes-1.lua: the entries after the position, or "the log no longer reaches back to it"), run
// on the store's main connection; when there is nothing new, an XREAD BLOCK on a dedicated connection
// waits for the next entry (no polling) and the loop reads again. The XREAD is only a wake-up, so it
// needs no exactness of its own. Its block time is half the command timeout and its reply is due
// within the command timeout, so a frozen Redis (SIGSTOP) is noticed within the command timeout too.
import type { Logger } from 'pino';
import type { LeaseEvent } from '../types.js';
import { PositionLostError, StoreUnavailableError } from '../types.js';
import type { CommandRunner } from './command-runner.js';
import { waitUntilReady, withDeadline } from './command-runner.js';
import { openRedisClient, type RedisClient } from './connection.js';
import type { StoreKeys } from './keys.js';
import { MalformedReplyError, parseChangeEntry } from './replies.js';
import type { StoreScriptCommands } from './scripts.js';
import type { RedisTarget } from './url.js';

/** A stream id, or "0-0" for "before the first entry". */
const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;
const BATCH = 500;

export interface FollowChangesOptions {
  runner: CommandRunner;
  keys: StoreKeys;
  target: RedisTarget;
  commandTimeoutMs: number;
  logger: Logger;
  position: string;
  signal: AbortSignal;
}

export async function* followChanges(options: FollowChangesOptions): AsyncGenerator<LeaseEvent, void, undefined> {
  const { runner, keys, signal, logger } = options;
  if (!STREAM_ID.test(options.position)) throw new PositionLostError(options.position);
  let position = options.position;
  const waker = new AppendWaker(options);
  try {
    while (!signal.aborted) {
      const reply = await runner.run('read changes', (client) =>
        (client as RedisClient & StoreScriptCommands).poolscopeReadChanges(keys.changes, position, BATCH),
      );
      if (reply[0] === 0) throw new PositionLostError(position);
      const entries = reply[1];
      for (const entry of entries) {
        if (signal.aborted) return;
        let event: LeaseEvent;
        try {
          event = parseChangeEntry(entry);
        } catch (error) {
          if (!(error instanceof MalformedReplyError)) throw error;
          // Skipping it would lose a change; a snapshot taken now is past it.
          logger.error({ err: error.message, position: entry[0] }, 'unreadable change log entry; re-reading a snapshot');
          throw new PositionLostError(position);
        }
        position = event.position;
        yield event;
      }
      if (entries.length === 0 && !signal.aborted) await waker.waitForAppend(position);
    }
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  } finally {
    waker.close();
  }
}

/** The dedicated blocking connection, opened on first need; any failure ends it (and the follow). */
class AppendWaker {
  private client: RedisClient | undefined;
  private readonly blockMs: number;
  private readonly onAbort = () => this.client?.disconnect();

  constructor(private readonly options: FollowChangesOptions) {
    this.blockMs = Math.max(1, Math.floor(options.commandTimeoutMs / 2));
    options.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Returns when an entry after `position` exists or the block time passed, whichever is first. */
  async waitForAppend(position: string): Promise<void> {
    const client = await this.connected();
    try {
      await client.xread('COUNT', 1, 'BLOCK', this.blockMs, 'STREAMS', this.options.keys.changes, position);
    } catch (error) {
      throw unavailable('waiting for changes', error);
    }
  }

  close(): void {
    this.options.signal.removeEventListener('abort', this.onAbort);
    this.client?.disconnect();
    this.client = undefined;
  }

  private async connected(): Promise<RedisClient> {
    if (this.client) return this.client;
    const { target, commandTimeoutMs, logger } = this.options;
    const client = openRedisClient({
      target,
      // The XREAD's reply is due after its block time; what exceeds this is a frozen Redis.
      commandTimeoutMs,
      reconnect: false,
      lazyConnect: true,
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

function unavailable(what: string, error: unknown): StoreUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`redis store: ${what} failed: ${message}`, { cause: error });
}
