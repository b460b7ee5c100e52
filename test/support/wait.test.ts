// The waiting helpers tests rely on: a window checked "throughout" must check at least once, or it proves
// nothing (a duration computed from a deadline that has already passed would otherwise pass silently).
import { describe, expect, it } from 'vitest';
import { throughout } from './wait.js';

describe('throughout()', () => {
  it('refuses a window that would run no check', async () => {
    let checks = 0;
    await expect(throughout(0, 10, () => void (checks += 1))).rejects.toThrow('a window of 0 ms would run no check');
    await expect(throughout(-250, 10, () => void (checks += 1))).rejects.toThrow('a window of -250 ms would run no check');
    await expect(throughout(Number.NaN, 10, () => void (checks += 1))).rejects.toThrow('would run no check');
    expect(checks).toBe(0);
  });

  it('checks at once and then every interval until the window ends, and says how often', async () => {
    let checks = 0;
    const ran = await throughout(100, 20, () => void (checks += 1));
    expect(ran).toBe(checks);
    expect(checks).toBeGreaterThanOrEqual(2);
  });

  it('checks once even when one check outlasts the window', async () => {
    const ran = await throughout(1, 0, () => new Promise((resolve) => setTimeout(resolve, 20)));
    expect(ran).toBe(1);
  });

  it('ends with the first check that fails', async () => {
    let checks = 0;
    await expect(
      throughout(1000, 5, () => {
        checks += 1;
        if (checks === 3) throw new Error('broken');
      }),
    ).rejects.toThrow('broken');
    expect(checks).toBe(3);
  });
});
