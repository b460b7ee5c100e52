import { describe, expect, it } from 'vitest';
import { reconnectDelays } from '../../src/store/redis/connection.js';

describe('reconnect delays', () => {
  it('start at 0.8 s, double up to 30 s, and start over after a connection', () => {
    const delays = reconnectDelays(() => 0);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(delays)).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    expect(delays(1)).toBe(800);
  });

  it('add jitter without passing the cap', () => {
    const delays = reconnectDelays(() => 0.999);
    const seen = [1, 2, 3, 4, 5, 6, 7].map(delays);
    expect(seen[0]).toBeGreaterThan(800);
    expect(seen[0]).toBeLessThanOrEqual(960);
    expect(Math.max(...seen)).toBeLessThanOrEqual(30000);
  });

  it('a follower’s reader: capped at a second, so a cut-off region is read again soon after it answers', () => {
    const delays = reconnectDelays(() => 0, 1000);
    expect([1, 2, 3, 4, 5].map(delays)).toEqual([250, 500, 1000, 1000, 1000]);
    expect(delays(1)).toBe(250);
  });
});
