// Runs store commands against Redis within the command timeout, turns every failure into a
// StoreUnavailableError (POST /pools answers 503 with it) and logs each change of Redis's availability
// once, not once per failed command. A command that times out on a connection that counts as ready, and
// on which nothing at all arrived since the command was sent, means the connection is dead (a half-open
// path, a frozen Redis): it is dropped and ioredis opens a new one (through Sentinel, asking the
// sentinels for the master again), instead of failing every later command on it too (docs/design.md
// "The store"). A connection that did receive bytes meanwhile is slow, not dead, and is kept.
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../types.js';
import type { RedisClient } from './connection.js';

export interface CommandRunnerOptions {
  client: RedisClient;
  commandTimeoutMs: number;
  logger: Logger;
  /** How the store names its Redis in logs (no credentials). */
  description: string;
  /**
   * Time every command from when the reply ahead of it arrived (see run's `fromTurn`): for a reader,
   * whose commands share one connection with a snapshot's pipelined reads. Default false: a writer's
   * command is timed from when it was sent, so a POST answers within the command timeout.
   */
  timeFromTurn?: boolean;
}

/** A command (or the wait for a connection) that did not answer within its bound. */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}

/** How ioredis's socket timeout says it dropped a connection (the error it destroys the socket with). */
const SOCKET_TIMEOUT = /^Socket timeout\b/;

/** Redis errors that say "not now" rather than "this command is wrong". */
const TRANSIENT_REPLY = /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY|NOREPLICAS|MOVED|ASK)\b/;

export class CommandRunner {
  private available: boolean | undefined;
  private readyWait: Promise<void> | undefined;
  private readonly availableListeners = new Set<() => void>();
  /** Counts the client's connections (each 'ready'), so a timeout drops only the connection it happened on. */
  private connection = 0;
  /** When the current connection last received a byte (performance.now()). */
  private lastDataAt = 0;
  /** The reply of the last command sent, and on which connection (see run's `fromTurn`). */
  private last: { connection: number; reply: Promise<unknown> } | undefined;
  /** Commands that failed because Redis did not answer in time or said "not now" (not refusals). */
  private unavailableCount = 0;

  /** The connection a drop was last logged for: the warning comes once per connection. */
  private droppedConnection = 0;
  /** What was sent last, and on which connection, for the warning of ioredis's socket timeout. */
  private lastSent: { connection: number; what: string } | undefined;

  constructor(private readonly options: CommandRunnerOptions) {
    // ioredis's socket timeout (connection.ts `socketTimeoutMs`, as long as the command timeout in the
    // store) may notice the silence before the command's own deadline does: the same warning, once.
    options.client.on('error', (error: Error) => {
      if (!SOCKET_TIMEOUT.test(error.message) || this.lastSent?.connection !== this.connection) return;
      this.warnDropped(this.lastSent.what);
    });
    options.client.on('ready', () => {
      this.connection += 1;
      this.lastDataAt = performance.now();
      // A Redis client has one socket (a Cluster has one per node, each dropped by ioredis's socketTimeout).
      const stream = (options.client as { stream?: Socket }).stream;
      stream?.on('data', () => {
        this.lastDataAt = performance.now();
      });
      // Redis answered the connection's ready check: whoever waits to retry (a store feed in its backoff)
      // may go now rather than after its next command succeeds, a round trip later.
      if (this.available === false) this.succeeded();
    });
  }

  /**
   * `command` is sent once the client is ready; the whole call takes at most the command timeout. With
   * `fromTurn` (by default with the runner's `timeFromTurn`), the timeout runs from when the reply of the
   * command sent before it on the same connection arrived instead: Redis answers a connection's commands
   * in order, so until then this one's cannot have, however healthy the link (docs/design.md "Snapshots
   * that scale with bytes"). A dead connection still fails it within a command timeout: nothing arrives,
   * and the socket timeout or dropIfSilent closes the connection, failing everything sent on it.
   */
  async run<T>(what: string, command: (client: RedisClient) => Promise<T>, options: { fromTurn?: boolean } = {}): Promise<T> {
    const { commandTimeoutMs } = this.options;
    const deadline = performance.now() + commandTimeoutMs;
    let sent: { connection: number; at: number } | undefined;
    try {
      const { status } = this.options.client;
      if (status !== 'ready') await withDeadline(this.whenReady(), commandTimeoutMs, `not connected (${status})`);
      const on = { connection: this.connection, at: performance.now() };
      sent = on;
      this.lastSent = { connection: on.connection, what };
      const ahead = this.last?.connection === on.connection ? this.last.reply : undefined;
      const reply = command(this.options.client);
      this.last = { connection: on.connection, reply };
      const result =
        (options.fromTurn ?? this.options.timeFromTurn ?? false) && ahead !== undefined
          ? await withDeadlineAfter(reply, ahead, commandTimeoutMs, () => {
              // Its clock starts now: bytes that arrived before were the replies ahead of it.
              on.at = performance.now();
            })
          : await withDeadline(reply, deadline - performance.now());
      this.succeeded();
      return result;
    } catch (error) {
      if (sent !== undefined && isTimeout(error)) {
        const on = sent;
        // After the I/O of this turn: a reply that was merely late behind a stalled event loop (its timer
        // ran first) has arrived by then, and the connection is kept.
        setImmediate(() => this.dropIfSilent(what, on));
      }
      throw this.failed(what, error);
    }
  }

  /** How many commands failed for want of Redis (a writer reports them with its next stamp: stamp-5.lua). */
  get failures(): number {
    return this.unavailableCount;
  }

  /**
   * `listener` is called each time Redis answers after a failure: a command succeeds, or a new connection
   * passes its ready check. Returns the unsubscribe function.
   */
  onAvailable(listener: () => void): () => void {
    this.availableListeners.add(listener);
    return () => {
      this.availableListeners.delete(listener);
    };
  }

  /**
   * A command timed out on a connection that counts as ready and received nothing since it was sent: drop
   * it and let ioredis reconnect on its backoff. A connection still being opened is ioredis's own to time out.
   */
  private dropIfSilent(what: string, sent: { connection: number; at: number }): void {
    const { client } = this.options;
    // Already replaced (or being replaced): the connection it was sent on is gone.
    if (client.status !== 'ready' || this.connection !== sent.connection) return;
    // Bytes arrived after it was sent: alive, only slow (or its reply came after the deadline).
    if (this.lastDataAt > sent.at) return;
    // A Cluster has no socket of its own here; its nodes' connections are dropped by ioredis's socketTimeout.
    const stream = (client as { stream?: Socket }).stream;
    if (!stream) return;
    this.warnDropped(what);
    // Destroyed, not ended: ioredis's disconnect(true) ends the socket and waits for Redis to close it
    // (2 s by default), and a held path never does, so it would stay 'ready' and take more commands till
    // then. Closed at once, ioredis reconnects on its backoff (as its own socket timeout does).
    stream.destroy();
  }

  private warnDropped(what: string): void {
    if (this.droppedConnection === this.connection) return;
    this.droppedConnection = this.connection;
    const { logger, description, commandTimeoutMs } = this.options;
    logger.warn(
      { redis: description, command: what, timeout_ms: commandTimeoutMs },
      'redis connection answered nothing within the command timeout; dropping it and reconnecting',
    );
  }

  /** One wait for `ready` shared by every command issued meanwhile (not one listener each). */
  private whenReady(): Promise<void> {
    this.readyWait ??= waitUntilReady(this.options.client).finally(() => {
      this.readyWait = undefined;
    });
    return this.readyWait;
  }

  private succeeded(): void {
    const recovered = this.available === false;
    this.available = true;
    if (!recovered) return;
    // The feed that reads the store logs the outage at a quiet cadence (docs/operations.md "Logs").
    this.options.logger.debug({ redis: this.options.description }, 'redis store is available again');
    for (const listener of [...this.availableListeners]) listener();
  }

  private failed(what: string, error: unknown): StoreUnavailableError {
    const message = error instanceof Error ? error.message : String(error);
    const unavailable = new StoreUnavailableError(`redis store: ${what} failed: ${message}`, { cause: error });
    const isBug = error instanceof Error && error.name === 'ReplyError' && !TRANSIENT_REPLY.test(message);
    if (isBug) {
      // A command Redis refused is a defect, not an outage: say so every time.
      this.options.logger.error({ redis: this.options.description, err: message, command: what }, 'redis refused a store command');
      return unavailable;
    }
    this.unavailableCount += 1;
    if (this.available !== false) {
      this.options.logger.debug({ redis: this.options.description, err: message, command: what }, 'redis store is unavailable');
      this.available = false;
    }
    return unavailable;
  }
}

/** Resolves on the client's `ready` (it may be connecting or reconnecting), rejects when it ends. */
export function waitUntilReady(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  if (client.status === 'end') return Promise.reject(new Error('the connection is closed'));
  return new Promise((resolve, reject) => {
    const onReady = () => settle();
    const onEnd = () => settle(new Error('the connection is closed'));
    function settle(error?: Error) {
      client.off('ready', onReady);
      client.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    }
    client.on('ready', onReady);
    client.on('end', onEnd);
  });
}

/** ioredis's own command timeout (the backstop behind withDeadline) says this. */
const IOREDIS_TIMEOUT = 'Command timed out';

function isTimeout(error: unknown): boolean {
  return error instanceof DeadlineError || (error instanceof Error && error.message === IOREDIS_TIMEOUT);
}

/**
 * The promise, or a DeadlineError once `ms` have passed since `start` settled (either way); `onStart` is
 * called then. `start` must itself settle in bounded time (it is the command ahead, bounded the same way).
 */
export function withDeadlineAfter<T>(promise: Promise<T>, start: Promise<unknown>, ms: number, onStart: () => void): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const begin = () => {
      if (settled) return;
      onStart();
      timer = setTimeout(() => {
        // After this turn's I/O: a reply that arrived while the event loop was stalled (its timer ran
        // first) still counts.
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new DeadlineError(IOREDIS_TIMEOUT));
        });
      }, ms);
    };
    start.then(begin, begin);
    promise.then(
      (value) => {
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The promise, or a DeadlineError once `ms` have passed (ioredis's own command timeout is the backstop). */
export function withDeadline<T>(promise: Promise<T>, ms: number, reason = IOREDIS_TIMEOUT): Promise<T> {
  if (ms <= 0) {
    promise.catch(() => {});
    return Promise.reject(new DeadlineError(reason));
  }
  return new Promise((resolve, reject) => {
    // After that turn's I/O: what arrived while the event loop was stalled (its timer ran first) counts.
    const timer = setTimeout(() => setImmediate(() => reject(new DeadlineError(reason))), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
