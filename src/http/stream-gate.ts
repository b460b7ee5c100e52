// The limits every event stream obeys (docs/contract.md §8), per kind of stream (`pools` for GET
// /pools/watch, `debug` for /debug/pools/watch): at most `--max-watchers` open at once, the next one refused
// with 503 too_many_watchers, and a stream whose unsent backlog passes `--watch-max-backlog-bytes` cut at
// once, logged and counted with its `stream` label. Writing never waits for a client: a frame goes to the
// stream's sink (watch-sink.ts) and what the client has not taken is its backlog.
import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { WatchDropReason, WatchStats, WatchStreamName } from '../metrics/limit-metrics.js';
import { ApiError } from './errors.js';
import { refuseWatcher } from './sse.js';
import type { WatchSink } from './watch-sink.js';

/** The limits of the watch streams (docs/contract.md §8) and their defaults. */
export interface WatchLimits {
  maxWatchers: number;
  maxBacklogBytes: number;
}
export const DEFAULT_WATCH_LIMITS: WatchLimits = { maxWatchers: 10_000, maxBacklogBytes: 4 * 1024 * 1024 };

/** Seconds a refused watcher is asked to wait before it tries again. */
export const WATCH_RETRY_AFTER_SECS = 5;

/** What a stream of one kind reports to the metrics. */
export interface StreamHooks {
  onDropped?: (reason: WatchDropReason, stream: WatchStreamName) => void;
  onRefused?: (stream: WatchStreamName) => void;
}

export interface StreamGateOptions extends WatchLimits, StreamHooks {
  stream: WatchStreamName;
  logger?: Logger;
}

/**
 * Whether `sink` holds more unsent bytes than the limit (plus `allowanceBytes`, e.g. one full resync in
 * flight); if so it is cut at once, logged with its stream, and counted. Returns whether it was cut.
 */
export function cutIfBehind(sink: WatchSink, allowanceBytes: number, options: StreamGateOptions): boolean {
  const backlog = sink.backlogBytes;
  if (backlog <= options.maxBacklogBytes + allowanceBytes) return false;
  sink.destroy();
  options.onDropped?.('backlog', options.stream);
  options.logger?.info(
    { stream: options.stream, peer: sink.peer, backlog_bytes: backlog, limit_bytes: options.maxBacklogBytes },
    'watch stream dropped: its unsent backlog passed the limit',
  );
  return true;
}

/**
 * The answer to one stream more than `--max-watchers` of its kind, counted: to an SSE client an
 * `overloaded` event it retries after by itself, to anyone else 503 too_many_watchers with Retry-After
 * (sse.ts).
 */
export function refuseStream(c: Context, options: Pick<StreamGateOptions, 'maxWatchers' | 'stream' | 'onRefused'>): Response {
  options.onRefused?.(options.stream);
  const error = new ApiError(
    503,
    'too_many_watchers',
    `this replica serves its maximum of ${options.maxWatchers} watch streams (--max-watchers); retry later or on another replica`,
  );
  return refuseWatcher(c, { error, retryAfterSecs: WATCH_RETRY_AFTER_SECS });
}

/** The open streams of one kind, against the limits. */
export class StreamGate implements WatchStats {
  private readonly sinks = new Set<WatchSink>();

  constructor(private readonly options: StreamGateOptions) {}

  get size(): number {
    return this.sinks.size;
  }

  get backlogBytes(): number {
    let total = 0;
    for (const sink of this.sinks) total += sink.backlogBytes;
    return total;
  }

  /** True when one more stream would pass `--max-watchers`. */
  get full(): boolean {
    return this.sinks.size >= this.options.maxWatchers;
  }

  /** The refusal of a stream past `--max-watchers` (counted). */
  refuse(c: Context): Response {
    return refuseStream(c, this.options);
  }

  /** Count `sink` until it closes. */
  admit(sink: WatchSink): void {
    this.sinks.add(sink);
    sink.onClose(() => this.sinks.delete(sink));
  }

  /** Hand `frame` to `sink`, then cut it if its backlog passed the limit (plus `allowanceBytes`); returns whether it is still open. */
  write(sink: WatchSink, frame: Uint8Array, allowanceBytes = 0): boolean {
    if (!this.sinks.has(sink)) return false;
    sink.write(frame);
    if (!cutIfBehind(sink, allowanceBytes, this.options)) return true;
    this.sinks.delete(sink);
    return false;
  }
}
