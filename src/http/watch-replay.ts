// The replay window of GET /pools/watch (docs/contract.md §5): the frames of the last changes (`upsert`,
// `delete`), the very bytes the hub handed every stream, kept by the sequence number of the revision each
// carries. Between two `resync`s every change moves the revision on by one, so the frame after sequence
// `s` sits at `s - base`. A `resync` empties the window: a stream that last saw a revision before it must
// hear the resync, which may drop pools without a `delete`, so no replay may skip it.
// Memory: at most `capacity` + 1/8 frames (docs/operations.md "Watch streams").

/** Changes a reconnecting stream can resume after (the contract's least). */
export const REPLAY_WINDOW = 10_000;

export class ReplayLog {
  /** frames[i] is the change that made sequence base + 1 + i. */
  private frames: Uint8Array[] = [];
  private base: number;

  constructor(
    private readonly capacity: number,
    /** The sequence the window starts after: nothing earlier can be replayed. */
    start: number,
  ) {
    this.base = start;
  }

  /** Frames held now. */
  get size(): number {
    return this.frames.length;
  }

  /** Forget every frame: a resync at `seq`, or frames not seen since. */
  reset(seq: number): void {
    this.frames = [];
    this.base = seq;
  }

  /** The change that made `seq`. A gap (a change this log never saw) starts the window again at `seq`. */
  push(seq: number, frame: Uint8Array): void {
    if (seq !== this.base + this.frames.length + 1) {
      this.reset(seq);
      return;
    }
    this.frames.push(frame);
    // Trimmed an eighth at a time, so a push costs no copy of the whole window.
    const over = this.frames.length - this.capacity;
    if (over > this.capacity / 8) {
      this.frames.splice(0, over);
      this.base += over;
    }
  }

  /** The frames after `seq`, oldest first; undefined when `seq` is outside the window. */
  since(seq: number): Uint8Array[] | undefined {
    if (!Number.isSafeInteger(seq) || seq < this.base || seq > this.base + this.frames.length) return undefined;
    return this.frames.slice(seq - this.base);
  }
}
