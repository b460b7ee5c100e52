// A backoff only time starts over (docs/design.md "Watch loops"): for relists after a 410 and for restarts
// of the loop after an unexpected failure, where nothing the loop sees in between (a list that succeeds, a
// watch that opens) proves the next attempt will fare better. As client-go's reflector backoff manager
// (0.8 s doubling to 30 s, reset after 2 min without a backoff), with poolscope's 20 % jitter.
import { Backoff, type BackoffOptions } from '../util/backoff.js';

/** No backoff asked for this long: the next one starts from the initial delay again. */
export const QUIET_RESET_MS = 120_000;

export class QuietResetBackoff {
  private readonly backoff: Backoff;
  private lastAt: number | undefined;

  constructor(
    options: BackoffOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.backoff = new Backoff(options);
  }

  next(): number {
    const now = this.now();
    // Stryker disable next-line ConditionalExpression: equivalent, now - undefined is NaN, never >= the quiet time
    if (this.lastAt !== undefined && now - this.lastAt >= QUIET_RESET_MS) this.backoff.reset();
    this.lastAt = now;
    return this.backoff.next();
  }
}
