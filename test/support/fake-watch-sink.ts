// A watch stream's sink in process (src/http/watch-sink.ts's WatchSink) that records the SSE bytes a client
// would read, for tests of the fan-out (src/http/watch-hub.ts): it checks every stream starts with
// `retry:` (docs/contract.md §11), and can stall (every byte stays in its backlog) or make each write slow.
import { expect } from 'vitest';
import { unchunk } from '../../src/http/sse.js';
import type { WatchSink } from '../../src/http/watch-sink.js';

export class FakeSink implements WatchSink {
  readonly frames: string[] = [];
  backlogBytes = 0;
  /** A stalled client: every byte stays in the backlog. */
  stalled = false;
  /** How long each write holds the event loop (a slow system call), in ms. */
  writeMs = 0;
  destroyed = false;
  readonly peer = 'fake';
  private readonly closers: (() => void)[] = [];
  write(frame: Uint8Array): void {
    for (const end = performance.now() + this.writeMs; performance.now() < end; );
    // The hub hands over HTTP/1.1 chunks; their SSE bytes are what a client reads.
    const text = new TextDecoder().decode(unchunk(frame));
    if (this.stalled) this.backlogBytes += frame.byteLength;
    // Every stream starts with `retry:` (docs/contract.md §11); the events follow.
    if (this.frames.length === 0 && !this.retried) {
      expect(text).toBe('retry: 1000\n\n');
      this.retried = true;
      return;
    }
    this.frames.push(text);
  }
  private retried = false;
  onClose(listener: () => void): void {
    this.closers.push(listener);
  }
  end(): void {
    this.closers.forEach((f) => f());
  }
  destroy(): void {
    this.destroyed = true;
    this.closers.forEach((f) => f());
  }
  /** The event kinds and pool names, in order. */
  events(): string[] {
    return this.frames.map((f) => `${/^event: (\w+)/.exec(f)?.[1]}:${/"name":"([^"]+)"/.exec(f)?.[1] ?? ''}`);
  }
}
