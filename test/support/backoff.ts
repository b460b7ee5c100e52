// The slice source's backoff as the tests check it (docs/design.md "Watch loops": 0.8 s doubling to
// 30 s, plus jitter): every recorded delay against the base it should have.
import { expect } from 'vitest';

/** Each delay is its base plus at most 20 % jitter, capped at 30 s. */
export function expectBackoff(delays: readonly number[], bases: readonly number[]): void {
  expect(delays).toHaveLength(bases.length);
  delays.forEach((delay, i) => {
    const base = bases[i]!;
    expect(delay, `delay ${i}`).toBeGreaterThanOrEqual(base);
    expect(delay, `delay ${i}`).toBeLessThanOrEqual(Math.min(30_000, base * 1.2));
  });
}
