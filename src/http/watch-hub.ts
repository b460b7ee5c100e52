// The fan-out of GET /pools/watch (docs/contract.md §5, §8): one subscription to the listed view for
// every watch stream of the replica. Each event is serialized and encoded once, into one frame that every
// stream is handed as it is; a new stream's first `resync` is the GET /pools body the view already
// encoded for its revision. Writes never wait for a client: what a stream has not sent yet is its
// backlog, and a stream whose backlog passes the limit is cut (the client reconnects and gets a
// `resync`), so a client that stops reading costs at most the limit and never slows the others.
// Frames go out in order, to BATCH streams at a time with a turn of the event loop between batches, so
// a change fanned out to 10,000 streams does not hold up other requests (/healthz) for the whole of it;
// a stream that joined after a frame was published skips it (its first resync already holds it).
// Keep-alive comments come from one timer for all streams. The hub follows the view from its start to its
// close, streams or none, and keeps the frames of the last changes (watch-replay.ts): a stream whose
// Last-Event-ID names a revision in that window resumes with the frames after it instead of a resync.
import type { Logger } from 'pino';
import type { WatchEvent } from '../contract/index.js';
import type { ListedView } from '../join/listed-view.js';
import type { WatchDropReason, WatchStats } from '../metrics/limit-metrics.js';
import { REPLAY_WINDOW, ReplayLog } from './watch-replay.js';
import type { WatchSink } from './watch-sink.js';

export type { WatchDropReason, WatchStats };

/** The limits of the watch streams (docs/contract.md §8) and their defaults. */
export interface WatchLimits {
  maxWatchers: number;
  maxBacklogBytes: number;
}
export const DEFAULT_WATCH_LIMITS: WatchLimits = { maxWatchers: 10_000, maxBacklogBytes: 4 * 1024 * 1024 };

export interface WatchHubOptions extends WatchLimits {
  view: ListedView;
  /** Period of the `: keep-alive` comment (the contract's bound is 15 s). */
  keepAliveMs: number;
  logger?: Logger;
  /** The number of open streams, after each change. */
  onSubscribers?: (count: number) => void;
  onDropped?: (reason: WatchDropReason) => void;
  /** Changes kept for resuming streams (default REPLAY_WINDOW). */
  replayWindow?: number;
}

const encoder = new TextEncoder();
/** Streams written to before other work gets a turn. */
const BATCH = 500;
const KEEPALIVE_FRAME = encoder.encode(': keep-alive\n\n');
/** The first bytes of a resumed stream: the client hears at once that the stream is open. */
const RESUMED_FRAME = encoder.encode(': resumed\n\n');

/** One SSE frame (docs/contract.md §5): `event:` the kind, `id:` the revision, `data:` one line of JSON. */
export function eventFrame(kind: string, revision: string, json: string): Uint8Array {
  return encoder.encode(`event: ${kind}\nid: ${revision}\ndata: ${json}\n\n`);
}

/**
 * `maxWatchers`: streams beyond this many are refused (`--max-watchers`); `maxBacklogBytes`: a stream whose
 * unsent bytes pass this is cut (`--watch-max-backlog-bytes`).
 */
export class WatchHub implements WatchStats {
  private readonly sinks = new Set<WatchSink>();
  /** Each stream's count of frames published before it joined (its first resync holds those). */
  private readonly joinedAfter = new Map<WatchSink, number>();
  private published = 0;
  private readonly pending: { seq: number; frame: Uint8Array }[] = [];
  private cursor: { seq: number; frame: Uint8Array; sinks: WatchSink[]; next: number } | undefined;
  private pumping = false;
  private unsubscribe: (() => void) | undefined;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** The first-resync frame of the view's current body (the body is encoded once per revision). */
  private resync: { body: Uint8Array; frame: Uint8Array } | undefined;
  /** The size of the last resync frame: one resync is always allowed in flight on top of the limit. */
  private resyncBytes = 0;
  private readonly replay: ReplayLog;

  constructor(private readonly options: WatchHubOptions) {
    const { view } = options;
    this.replay = new ReplayLog(options.replayWindow ?? REPLAY_WINDOW, view.sequenceOf(view.revision)!);
    this.unsubscribe = view.subscribe((event) => this.publish(event));
  }

  get size(): number {
    return this.sinks.size;
  }

  /** Unsent bytes of every stream, summed (read when /metrics is scraped). */
  get backlogBytes(): number {
    let total = 0;
    for (const sink of this.sinks) total += sink.backlogBytes;
    return total;
  }

  /** `--max-watchers`. */
  get maxWatchers(): number {
    return this.options.maxWatchers;
  }

  /** True when one more stream would pass `--max-watchers`. */
  get full(): boolean {
    return this.sinks.size >= this.options.maxWatchers;
  }

  /**
   * A new stream: its `resync` now, then every event; or, when `lastEventId` is a revision of this view
   * within the replay window, the changes after it (no resync), then every event. After close(), ended at
   * once. Returns whether the stream resumed.
   */
  add(sink: WatchSink, lastEventId?: string): boolean {
    if (this.closed) {
      sink.end();
      return false;
    }
    this.sinks.add(sink);
    this.joinedAfter.set(sink, this.published);
    sink.onClose(() => this.remove(sink));
    if (this.sinks.size === 1) this.start();
    this.options.onSubscribers?.(this.sinks.size);
    const replay = lastEventId === undefined ? undefined : this.replayAfter(lastEventId);
    this.deliver(sink, replay ?? this.firstResync());
    return replay !== undefined;
  }

  /**
   * The frames after `revision`, behind a comment, as one write; undefined when it is not in the window,
   * or when they are more than a stream may hold unsent (the resync is then the smaller start).
   */
  private replayAfter(revision: string): Uint8Array | undefined {
    const seq = this.options.view.sequenceOf(revision);
    const frames = seq === undefined ? undefined : this.replay.since(seq);
    if (frames === undefined) return undefined;
    const bytes = Buffer.concat([RESUMED_FRAME, ...frames]);
    return bytes.byteLength > this.options.maxBacklogBytes ? undefined : bytes;
  }

  /** End every stream and take no more (the server drains). */
  close(): void {
    this.closed = true;
    this.pending.length = 0;
    this.cursor = undefined;
    for (const sink of [...this.sinks]) sink.end();
    this.stop();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private remove(sink: WatchSink): void {
    this.joinedAfter.delete(sink);
    if (!this.sinks.delete(sink)) return;
    if (this.sinks.size === 0) this.stop();
    this.options.onSubscribers?.(this.sinks.size);
  }

  private start(): void {
    this.keepAlive = setInterval(() => this.broadcast(KEEPALIVE_FRAME), this.options.keepAliveMs);
    this.keepAlive.unref();
  }

  private stop(): void {
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  private publish(event: WatchEvent): void {
    const seq = this.options.view.sequenceOf(event.data.revision)!;
    if (event.kind === 'resync') {
      this.replay.reset(seq);
      // Nobody to send it to: no stream (a new one starts with its own resync), nothing to keep.
      if (this.sinks.size === 0) return;
    }
    const frame = eventFrame(event.kind, event.data.revision, JSON.stringify(event.data));
    if (event.kind === 'resync') this.resyncBytes = frame.byteLength;
    else this.replay.push(seq, frame);
    if (this.sinks.size > 0) this.broadcast(frame);
  }

  private firstResync(): Uint8Array {
    const body = this.options.view.body();
    if (this.resync?.body !== body) {
      const head = encoder.encode(`event: resync\nid: ${this.options.view.revision}\ndata: `);
      const frame = new Uint8Array(head.byteLength + body.byteLength + 2);
      frame.set(head, 0);
      frame.set(body, head.byteLength);
      frame.set(encoder.encode('\n\n'), head.byteLength + body.byteLength);
      this.resync = { body, frame };
      this.resyncBytes = frame.byteLength;
    }
    return this.resync.frame;
  }

  private broadcast(frame: Uint8Array): void {
    this.published += 1;
    this.pending.push({ seq: this.published, frame });
    if (!this.pumping) this.pump();
  }

  /** Write pending frames in order, BATCH streams at a time, until none is left. */
  private readonly pump = (): void => {
    this.pumping = true;
    let budget = BATCH;
    while (budget > 0) {
      if (this.cursor === undefined) {
        const next = this.pending.shift();
        if (next === undefined) {
          this.pumping = false;
          return;
        }
        this.cursor = { ...next, sinks: [...this.sinks], next: 0 };
      }
      const cursor = this.cursor;
      while (budget > 0 && cursor.next < cursor.sinks.length) {
        const sink = cursor.sinks[cursor.next++]!;
        budget -= 1;
        const after = this.joinedAfter.get(sink);
        if (after !== undefined && after < cursor.seq) this.deliver(sink, cursor.frame);
      }
      if (cursor.next >= cursor.sinks.length) this.cursor = undefined;
    }
    setImmediate(this.pump);
  };

  private deliver(sink: WatchSink, frame: Uint8Array): void {
    sink.write(frame);
    const backlog = sink.backlogBytes;
    if (backlog <= this.options.maxBacklogBytes + this.resyncBytes) return;
    this.sinks.delete(sink);
    this.joinedAfter.delete(sink);
    sink.destroy();
    this.options.onDropped?.('backlog');
    this.options.logger?.info(
      { peer: sink.peer, backlog_bytes: backlog, limit_bytes: this.options.maxBacklogBytes },
      'watch stream dropped: its unsent backlog passed the limit',
    );
    if (this.sinks.size === 0) this.stop();
    this.options.onSubscribers?.(this.sinks.size);
  }
}
