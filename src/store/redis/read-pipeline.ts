// The reads of one snapshot, pipelined on one connection with bounds that scale with bytes, not with
// commands (docs/design.md "Snapshots that scale with bytes"):
// - each command's timeout runs from when the reply ahead of it arrived (CommandRunner `fromTurn`): Redis
//   answers one connection in order, so a read waiting its turn behind megabytes of replies on a slow
//   link is not late; a link that carries nothing for a whole command timeout still fails the read;
// - the replies owed at once are bounded (`windowBytes`, estimated from the replies so far), so Redis
//   never buffers a whole region for one reader, and no command of another part of the replica on the
//   same connection waits behind more than that;
// - a read script asks for as many pools as fit `readBytes` at the size seen so far (at most
//   `maxPools`), so a reply crosses a slow link well within one command timeout.
import type { CommandRunner } from './command-runner.js';
import type { RedisClient } from './connection.js';

export interface ReadPipelineOptions {
  runner: CommandRunner;
  /** What the runner names in logs. */
  what: string;
  /** Bytes of replies owed at once, at most (one read is always let through). */
  windowBytes: number;
  /** Bytes one read script should return. */
  readBytes: number;
  /** Pools one read script reads at most, whatever their size. */
  maxPools: number;
  /** What a pool is taken to weigh until a reply says: on the heavy side, so the first reads stay small. */
  initialPoolBytes: number;
  /**
   * What the pools of the last snapshot weighed, kept by the reader from one snapshot to the next (a
   * region's registrations keep about their size), so only its first snapshot starts from the guess.
   */
  weight: PoolWeight;
}

/** Pools read and the bytes their replies carried. */
export interface PoolWeight {
  pools: number;
  bytes: number;
}

export class ReadPipeline {
  private owedBytes = 0;
  private readonly owed = new Set<Promise<unknown>>();

  /** A pool's weight until this snapshot's first reply: the last snapshot's mean, or the guess. */
  private readonly guess: number;

  constructor(private readonly options: ReadPipelineOptions) {
    const { weight } = options;
    this.guess = weight.pools === 0 ? options.initialPoolBytes : Math.max(1, weight.bytes / weight.pools);
    // This snapshot's own replies from now on, so a region whose registrations grew is sized by what they weigh now.
    weight.pools = 0;
    weight.bytes = 0;
  }

  /** Sent at once, behind everything sent on the connection; timed from when the reply ahead arrived. */
  send<T>(command: (client: RedisClient) => Promise<T>): Promise<T> {
    return this.options.runner.run(this.options.what, command, { fromTurn: true });
  }

  /** How many of `available` pools the next read script should read. */
  nextBatch(available: number): number {
    const { readBytes, maxPools } = this.options;
    return Math.max(1, Math.min(available, maxPools, Math.floor(readBytes / this.poolBytes())));
  }

  /**
   * Sends a read of `pools` pools once the replies owed leave room for it; `measure` gives the bytes its
   * reply carried (they size the next reads). Rejects, before sending, when a read owed failed meanwhile.
   */
  async read<T>(pools: number, command: (client: RedisClient) => Promise<T>, measure: (reply: T) => number): Promise<{ reply: Promise<T> }> {
    const expected = pools * this.poolBytes();
    while (this.owed.size > 0 && this.owedBytes + expected > this.options.windowBytes) await Promise.race(this.owed);
    this.owedBytes += expected;
    const settle = () => {
      this.owed.delete(reply);
      this.owedBytes -= expected;
    };
    const reply: Promise<T> = this.send(command).then(
      (value) => {
        settle();
        this.options.weight.pools += pools;
        this.options.weight.bytes += measure(value);
        return value;
      },
      (error: unknown) => {
        settle();
        throw error;
      },
    );
    this.owed.add(reply);
    // Awaited by the caller; a failure meanwhile must not count as unobserved (the race above rethrows it).
    reply.catch(() => {});
    return { reply };
  }

  /** What a pool weighs in a reply: this snapshot's mean so far, or the guess before its first reply. */
  private poolBytes(): number {
    const { weight } = this.options;
    return weight.pools === 0 ? this.guess : Math.max(1, weight.bytes / weight.pools);
  }
}
