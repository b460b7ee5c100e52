// The errors a store throws, as the feeds tell them apart (docs/design.md "The store"): stale data from a
// cut-off read replica, however deep a store wrapped it; a replaced store, which is a lost position too.
import { describe, expect, it } from 'vitest';
import {
  isStaleData,
  PositionLostError,
  StaleDataError,
  StoreReplacedError,
  StoreUnavailableError,
} from '../../src/store/types.js';

/** `inner` wrapped `depth` times, each wrapper naming the one before as its cause. */
function wrapped(inner: Error, depth: number): Error {
  let error = inner;
  for (let i = 0; i < depth; i += 1) error = new StoreUnavailableError(`wrap ${i}`, { cause: error });
  return error;
}

describe('store errors', () => {
  it('stale data is found in the error itself or down its causes, at most eight deep', () => {
    const stale = new StaleDataError('replica link down');
    expect(isStaleData(stale)).toBe(true);
    expect(isStaleData(wrapped(stale, 1))).toBe(true);
    expect(isStaleData(wrapped(stale, 7))).toBe(true);
    expect(isStaleData(wrapped(stale, 8))).toBe(false);
  });

  it('anything else is not stale data: another error, its causes, a value that is no error, a cycle', () => {
    expect(isStaleData(new StoreUnavailableError('timed out'))).toBe(false);
    expect(isStaleData(wrapped(new Error('reset'), 3))).toBe(false);
    expect(isStaleData('StaleDataError')).toBe(false);
    expect(isStaleData(undefined)).toBe(false);
    const cycle = new StoreUnavailableError('a');
    (cycle as { cause?: unknown }).cause = cycle;
    expect(isStaleData(cycle)).toBe(false);
  });

  it('name themselves in logs, and a replaced store is a lost position with it', () => {
    expect(new StaleDataError('x')).toMatchObject({ name: 'StaleDataError' });
    expect(new StaleDataError('x')).toBeInstanceOf(StoreUnavailableError);
    const replaced = new StoreReplacedError('12-0');
    expect(replaced).toBeInstanceOf(PositionLostError);
    expect(replaced).toMatchObject({ name: 'StoreReplacedError', position: '12-0' });
    expect(replaced.message).toBe('the change log no longer reaches back to position 12-0');
    expect(String(replaced)).toBe('StoreReplacedError: the change log no longer reaches back to position 12-0');
  });
});
