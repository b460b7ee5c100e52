// The fan-out of GET /pools/watch (docs/contract.md §5, §8): one subscription to the listed view for
// every watch stream of the replica. Each event is serialized and encoded once, into one frame that every
// stream is handed as it is; a new stream's first `resync` is the GET /pools body the view already
// encoded for its revision. Writes never wait for a client: what a stream has not sent yet is its
// backlog, and a stream whose backlog passes the limit is cut (the client reconnects and gets a
// `resync`), so a client that stops reading costs at most the limit and never slows the others.
// Frames go out in order, to at most BATCH streams and for at most SLICE_MS at a time, with a turn of the
// event loop between slices, so a change fanned out to 10,000 streams does not hold up other requests
// (/healthz) for the whole of it (each write is a system call: 500 of them, while changes at 100,000
// pools were served, held the loop for 25–47 ms in one turn of a CPU profile);
// a stream that joined after a frame was published skips it (its first resync already holds it).
// Keep-alive comments come from one timer for all streams. The hub follows the view from its start to its
// close, streams or none, and keeps the frames of the last changes (watch-replay.ts): a stream whose
// Last-Event-ID names a revision in that window resumes with the frames after it instead of a resync.
import type { Logger } from 'pino';
import type { ViewEventBase } from '../join/listed-view.js';
import type { ListBody } from '../join/listed-view.js';
import type { WatchDropReason, WatchStats, WatchStreamName } from '../metrics/limit-metrics.js';
import { SLICE_MS } from '../join/list-body.js';
import { chunkOf, CLOSING_FRAME, STREAM_RETRY_FRAME } from './sse.js';
import { cutIfBehind, type StreamHooks, type WatchLimits } from './stream-gate.js';
import { REPLAY_WINDOW, ReplayLog } from './watch-replay.js';
import type { WatchSink } from './watch-sink.js';

export type { WatchDropReason, WatchStats };

/** What the hub reads of a listed view (the pools', the routers'). */
export interface WatchableView {
  readonly revision: string;
  sequenceOf(revision: string): number | undefined;
  subscribe(listener: (event: ViewEventBase) => void): () => void;
  /** The unfiltered body a new stream's first resync carries: the one being written, or the current one (ListedView). */
  listBody(): ListBody;
  /** The unfiltered body of the current revision, started now if it is not (a `resync` event's data). */
  currentBody(): ListBody;
}

export interface WatchHubOptions extends WatchLimits {
  view: WatchableView;
  /** Which stream this is, in log lines and metrics (default `pools`). */
  stream?: WatchStreamName;
  /** Period of the `: keep-alive` comment (the contract's bound is 15 s). */
  keepAliveMs: number;
  logger?: Logger;
  /** The number of open streams, after each change. */
  onSubscribers?: (count: number) => void;
  onDropped?: StreamHooks['onDropped'];
  /** Changes kept for resuming streams (default REPLAY_WINDOW). */
  replayWindow?: number;
  /** How long one slice of the fan-out may hold the event loop (default SLICE_MS, as a list body's writing). */
  sliceMs?: number;
}

const encoder = new TextEncoder();
/** Streams written to, at most, before other work gets a turn (and never for longer than SLICE_MS). */
const BATCH = 500;
// Every frame is an HTTP/1.1 chunk, built once and handed to every stream as it is (watch-sink.ts).
const KEEPALIVE_FRAME = chunkOf([encoder.encode(': keep-alive\n\n')]);
/** The first bytes of a resumed stream: the client hears at once that the stream is open. */
const RESUMED_FRAME = chunkOf([encoder.encode(': resumed\n\n')]);
const RETRY_FRAME = chunkOf([STREAM_RETRY_FRAME]);
const CLOSING = chunkOf([CLOSING_FRAME]);
const END_OF_EVENT = encoder.encode('\n\n');

/** One SSE frame (docs/contract.md §5), as a chunk: `event:` the kind, `id:` the revision, `data:` one line of JSON. */
export function eventFrame(kind: string, revision: string, json: string): Uint8Array {
  return chunkOf([encoder.encode(`event: ${kind}\nid: ${revision}\ndata: ${json}\n\n`)]);
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
  /** Frames to write, in order; a `resync` whose body is still being written holds the ones after it. */
  private readonly pending: { seq: number; frame: Uint8Array | Promise<Uint8Array> }[] = [];
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

  private readonly sliceMs: number;

  constructor(private readonly options: WatchHubOptions) {
    const { view } = options;
    this.sliceMs = options.sliceMs ?? SLICE_MS;
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

  /** Which stream this hub feeds. */
  get stream(): WatchStreamName {
    return this.options.stream ?? 'pools';
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
    // `retry:` first, on every stream (docs/contract.md §11).
    sink.write(RETRY_FRAME);
    if (replay === undefined) {
      // No frame reaches it (the pump skips a stream that has not joined) until its resync is written.
      this.joinedAfter.delete(sink);
      this.startWithResync(sink).catch((error: unknown) => {
        // Writing a body does not fail; were it to, the stream is cut and its client reconnects.
        this.options.logger?.error({ err: error, peer: sink.peer }, 'watch stream: first resync failed');
        sink.destroy();
      });
      return false;
    }
    this.deliver(sink, replay);
    return true;
  }

  /**
   * The stream's first resync: the list body of a revision, then the frames of the changes after it, as
   * one write; from then on it gets every frame published. A body older than the replay window (a resync
   * came meanwhile) is left for a newer one.
   */
  private async startWithResync(sink: WatchSink): Promise<void> {
    for (;;) {
      const body = this.options.view.listBody();
      // Written already (a list of one slice, or a body served before): in this very turn.
      const bytes = body.ready ?? (await body.bytes);
      if (this.closed || !this.sinks.has(sink)) return;
      const since = this.replay.since(body.seq);
      if (since === undefined) continue;
      const frame = this.resyncFrame(body.revision, bytes);
      this.joinedAfter.set(sink, this.published);
      this.deliver(sink, since.length === 0 ? frame : Buffer.concat([frame, ...since]));
      return;
    }
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

  /** End every stream with a `closing` event and take no more (the server drains). */
  close(): void {
    this.closed = true;
    this.pending.length = 0;
    this.cursor = undefined;
    for (const sink of [...this.sinks]) sink.end(CLOSING);
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

  private publish(event: ViewEventBase): void {
    const seq = this.options.view.sequenceOf(event.data.revision)!;
    if (event.kind === 'resync') {
      this.replay.reset(seq);
      // Nobody to send it to: no stream (a new one starts with its own resync), nothing to keep.
      if (this.sinks.size === 0) return;
      // The list of this very revision, written by the view in slices (never a whole large list in one
      // turn): the same bytes as GET /pools, framed once. Frames after it wait for it.
      const body = this.options.view.currentBody();
      const revision = event.data.revision;
      this.broadcast(body.ready ? this.resyncFrame(revision, body.ready) : body.bytes.then((bytes) => this.resyncFrame(revision, bytes)));
      return;
    }
    const frame = eventFrame(event.kind, event.data.revision, JSON.stringify(event.data));
    this.replay.push(seq, frame);
    if (this.sinks.size > 0) this.broadcast(frame);
  }

  /** The first-resync frame of a body, framed once per body and shared by every stream that starts with it. */
  private resyncFrame(revision: string, body: Uint8Array): Uint8Array {
    if (this.resync?.body !== body) {
      const head = encoder.encode(`event: resync\nid: ${revision}\ndata: `);
      const frame = chunkOf([head, body, END_OF_EVENT]);
      this.resync = { body, frame };
      this.resyncBytes = frame.byteLength;
    }
    return this.resync.frame;
  }

  private broadcast(frame: Uint8Array | Promise<Uint8Array>): void {
    this.published += 1;
    this.pending.push({ seq: this.published, frame });
    if (!this.pumping) this.pump();
  }

  /** Write pending frames in order, a slice (BATCH streams, SLICE_MS) a turn, until none is left. */
  private readonly pump = (): void => {
    this.pumping = true;
    let budget = BATCH;
    const sliceEnd = performance.now() + this.sliceMs;
    while (budget > 0) {
      if (this.cursor === undefined) {
        const next = this.pending[0];
        if (next === undefined) {
          this.pumping = false;
          return;
        }
        if (next.frame instanceof Promise) {
          // A resync still being written: go on once it is (still pumping, so nothing else starts a pump).
          next.frame.then(
            (frame) => (next.frame = frame),
            (error: unknown) => {
              // Writing a body does not fail; were it to, the streams would miss this resync: cut them all.
              this.options.logger?.error({ err: error }, 'watch streams: a resync could not be written');
              for (const sink of [...this.sinks]) sink.destroy();
              next.frame = new Uint8Array(0);
            },
          ).finally(this.pump);
          return;
        }
        this.pending.shift();
        this.cursor = { seq: next.seq, frame: next.frame, sinks: [...this.sinks], next: 0 };
      }
      const cursor = this.cursor;
      while (budget > 0 && cursor.next < cursor.sinks.length) {
        const sink = cursor.sinks[cursor.next++]!;
        budget -= 1;
        const after = this.joinedAfter.get(sink);
        if (after !== undefined && after < cursor.seq) {
          this.deliver(sink, cursor.frame);
          if (performance.now() >= sliceEnd) budget = 0;
        }
      }
      if (cursor.next >= cursor.sinks.length) this.cursor = undefined;
    }
    setImmediate(this.pump);
  };

  private deliver(sink: WatchSink, frame: Uint8Array): void {
    sink.write(frame);
    // A sink cut may have closed already (a web stream's destroy() calls its onClose listeners at once, a
    // socket's later): removed once either way, so the open streams are reported once.
    if (cutIfBehind(sink, this.resyncBytes, { ...this.options, stream: this.options.stream ?? 'pools' })) this.remove(sink);
  }
}
