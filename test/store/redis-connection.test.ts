import { describe, expect, it } from 'vitest';
import { reconnectDelays } from '../../src/store/redis/connection.js';

describe('reconnect delays', () => {
  it('start at 0.1 s, double up to 2 s, and start over after a connection', () => {
    const delays = reconnectDelays(() => 0);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(delays)).toEqual([100, 200, 400, 800, 1600, 2000, 2000, 2000]);
    expect(delays(1)).toBe(100);
  });

  it('add jitter, below the cap once there', () => {
    const delays = reconnectDelays(() => 0.999);
    const seen = [1, 2, 3, 4, 5, 6, 7, 8].map(delays);
    expect(seen[0]).toBeGreaterThan(100);
    expect(seen[0]).toBeLessThanOrEqual(120);
    // At the cap the jitter is taken off it, so replicas that lost Redis together do not all come back at once.
    expect(seen.slice(5)).toEqual([1600, 1600, 1600]);
    expect(Math.max(...seen)).toBeLessThanOrEqual(2000);
  });

  it('a follower’s reader: capped at a second, so a cut-off region is read again soon after it answers', () => {
    const delays = reconnectDelays(() => 0, 1000);
    expect([1, 2, 3, 4, 5, 6].map(delays)).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(delays(1)).toBe(100);
  });
});
