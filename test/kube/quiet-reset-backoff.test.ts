// The relist and restart backoff: it keeps growing however the attempts in between fare, and only two
// minutes without a backoff start it over (docs/design.md "Watch loops").
import { describe, expect, it } from 'vitest';
import { QUIET_RESET_MS, QuietResetBackoff } from '../../src/kube/quiet-reset-backoff.js';

describe('QuietResetBackoff', () => {
  it('doubles to its cap while backoffs follow each other, and starts over after the quiet period', () => {
    let now = 0;
    const backoff = new QuietResetBackoff({ initialMs: 800, maxMs: 30_000, jitter: 0 }, () => now);
    const delays = [];
    for (let i = 0; i < 7; i++) {
      delays.push(backoff.next());
      now += 30_000;
    }
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000]);
    now += QUIET_RESET_MS - 30_000 - 1;
    expect(backoff.next()).toBe(30_000);
    now += QUIET_RESET_MS;
    expect(backoff.next()).toBe(800);
    expect(backoff.next()).toBe(1600);
  });
});
