// Runs store commands against Redis within the command timeout, turns every failure into a
// StoreUnavailableError (POST /pools answers 503 with it) and logs each change of Redis's availability
// once, not once per failed command.
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../types.js';
import type { RedisClient } from './connection.js';

export interface CommandRunnerOptions {
  client: RedisClient;
  commandTimeoutMs: number;
  logger: Logger;
  /** How the store names its Redis in logs (no credentials). */
  description: string;
}

/** Redis errors that say "not now" rather than "this command is wrong". */
const TRANSIENT_REPLY = /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY|NOREPLICAS|MOVED|ASK)\b/;

export class CommandRunner {
  private available: boolean | undefined;
  private readyWait: Promise<void> | undefined;

  constructor(private readonly options: CommandRunnerOptions) {}

  /** `command` is sent once the client is ready; the whole call takes at most the command timeout. */
  async run<T>(what: string, command: (client: RedisClient) => Promise<T>): Promise<T> {
    const { commandTimeoutMs } = this.options;
    const deadline = performance.now() + commandTimeoutMs;
    try {
      const { status } = this.options.client;
      if (status !== 'ready') await withDeadline(this.whenReady(), commandTimeoutMs, `not connected (${status})`);
      const result = await withDeadline(command(this.options.client), deadline - performance.now());
      this.succeeded();
      return result;
    } catch (error) {
      throw this.failed(what, error);
    }
  }

  /** One wait for `ready` shared by every command issued meanwhile (not one listener each). */
  private whenReady(): Promise<void> {
    this.readyWait ??= waitUntilReady(this.options.client).finally(() => {
      this.readyWait = undefined;
    });
    return this.readyWait;
  }

  private succeeded(): void {
    if (this.available === false) {
      this.options.logger.info({ redis: this.options.description }, 'redis store is available again');
    }
    this.available = true;
  }

  private failed(what: string, error: unknown): StoreUnavailableError {
    const message = error instanceof Error ? error.message : String(error);
    const unavailable = new StoreUnavailableError(`redis store: ${what} failed: ${message}`, { cause: error });
    const isBug = error instanceof Error && error.name === 'ReplyError' && !TRANSIENT_REPLY.test(message);
    if (isBug) {
      // A command Redis refused is a defect, not an outage: say so every time.
      this.options.logger.error({ redis: this.options.description, err: message, command: what }, 'redis refused a store command');
    } else if (this.available !== false) {
      this.options.logger.warn({ redis: this.options.description, err: message, command: what }, 'redis store is unavailable');
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

/** The promise, or a rejection once `ms` have passed (ioredis's own command timeout is the backstop). */
export function withDeadline<T>(promise: Promise<T>, ms: number, reason = 'Command timed out'): Promise<T> {
  if (ms <= 0) {
    promise.catch(() => {});
    return Promise.reject(new Error(reason));
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(reason)), ms);
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
