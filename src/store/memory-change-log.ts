// The memory store's change log: a capped, in-order list of lease events that watchers follow without
// polling (each append wakes them). Positions are decimal sequence numbers: "0" is before the first
// event, event n has position "n".
import type { Registration } from '../contract/index.js';
import type { LeaseEvent } from './types.js';
import { PositionLostError } from './types.js';

/** A lease event before the log gave it a position. */
export type UnpositionedEvent<R = Registration> = DistributiveOmit<LeaseEvent<R>, 'position'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface MemoryChangeLogOptions {
  /** How many events the log keeps at least; older ones are dropped in small chunks. */
  cap: number;
}

const POSITION = /^(0|[1-9][0-9]{0,15})$/;

export class MemoryChangeLog<R = Registration> {
  /** entries[i] has sequence number firstSeq + i. */
  private entries: LeaseEvent<R>[] = [];
  private firstSeq = 1;
  private lastSeq = 0;
  private readonly wakeups = new Set<() => void>();
  private closed = false;
  private readonly cap: number;
  /** Trim in chunks, not on every append: splicing the array's head costs O(cap). */
  private readonly slack: number;

  constructor(options: MemoryChangeLogOptions) {
    if (!Number.isInteger(options.cap) || options.cap < 1) {
      throw new RangeError(`changeLogCap must be a positive integer, got ${options.cap}`);
    }
    this.cap = options.cap;
    this.slack = Math.max(1, Math.floor(options.cap / 10));
  }

  /** The position of the newest event ("0" when there is none yet). */
  get position(): string {
    return String(this.lastSeq);
  }

  append(event: UnpositionedEvent<R>): void {
    this.lastSeq += 1;
    this.entries.push({ ...event, position: String(this.lastSeq) } as LeaseEvent<R>);
    if (this.entries.length > this.cap + this.slack) {
      const drop = this.entries.length - this.cap;
      this.entries.splice(0, drop);
      this.firstSeq += drop;
    }
    this.wake();
  }

  /**
   * The events after `position`, in order, until `signal` aborts or the log is closed; `reached` is awaited
   * once the log is found to reach back to `position`, before any event (LeaseReader.watch).
   */
  async *follow(position: string, signal: AbortSignal, reached?: () => Promise<void>): AsyncGenerator<LeaseEvent<R>, void, undefined> {
    let cursor = this.parse(position);
    await reached?.();
    for (;;) {
      if (signal.aborted || this.closed) return;
      // Checked on every step: the consumer may be slow enough for the log to be trimmed under it.
      if (cursor < this.firstSeq - 1) throw new PositionLostError(String(cursor));
      if (cursor < this.lastSeq) {
        cursor += 1;
        // A copy per delivery: one consumer mutating an event must not change what others see.
        yield structuredClone(this.entries[cursor - this.firstSeq] as LeaseEvent<R>);
        continue;
      }
      await this.nextAppend(signal);
    }
  }

  /** Ends every follower. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  private parse(position: string): number {
    if (!POSITION.test(position)) throw new PositionLostError(position);
    const seq = Number(position);
    // A position the log never reached comes from another log (e.g. before a restart).
    if (seq > this.lastSeq || seq < this.firstSeq - 1) throw new PositionLostError(position);
    return seq;
  }

  private nextAppend(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.wakeups.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.wakeups.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    for (const wakeup of [...this.wakeups]) wakeup();
  }
}
