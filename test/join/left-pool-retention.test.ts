// The defaults of how long a pool that left stays in /debug (docs/contract.md §3: "A pool that left stays
// in `/debug/pools` for ten minutes (at most 10,000 of them)"), pinned on a PoolDirectory built the way the
// join builds it, with no retention options: ten minutes on the wall clock, forgotten by the directory's
// own timer, and never more than 10,000 left pools however fast they leave.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { poolKey, type PoolKey } from '../../src/contract/index.js';
import { PoolDirectory } from '../../src/join/pool-directory.js';
import { EVENTS } from '../machines/pool-events.js';
import { directoryOnTestClocks } from './support.js';

const TEN_MINUTES = 10 * 60_000;
const MAX_RETAINED = 10_000;

const keyNamed = (name: string): PoolKey => poolKey({ cluster_id: 'c1', namespace: 'llm', name });

/** A directory with the join's options (registrations mode, no retention options), its clocks the test's. */
function defaultDirectory() {
  const { directory, wall, clock } = directoryOnTestClocks('registrations');
  /** The wall clock, the actors' clock and the directory's timer move together. */
  const advance = (ms: number) => {
    wall.now += ms;
    clock.increment(ms);
    vi.advanceTimersByTime(ms);
  };
  const leave = (key: PoolKey) => {
    directory.send(key, EVENTS.UPSERT_F);
    directory.send(key, EVENTS.LAPSE);
  };
  return { directory, advance, leave };
}

describe('a pool that left, with the default retention', () => {
  let directory: PoolDirectory | undefined;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    directory?.stop();
    directory = undefined;
    vi.useRealTimers();
  });

  it('stays for ten minutes, then the directory’s own timer forgets it within one timer period', () => {
    const setup = defaultDirectory();
    directory = setup.directory;
    directory.start();
    const gone = keyNamed('gone');
    setup.leave(gone);
    expect(directory.get(gone)?.getSnapshot().value).toBe('lapsed');

    setup.advance(TEN_MINUTES - 1);
    expect(directory.get(gone)?.getSnapshot().value).toBe('lapsed');
    // The timer runs every retention / 10, at most every 10 s.
    setup.advance(10_000 + 1);
    expect(directory.get(gone)).toBeUndefined();
    expect(directory.size).toBe(0);
  });

  it('keeps at most 10,000 left pools: the 10,001st departure evicts the oldest', () => {
    const setup = defaultDirectory();
    directory = setup.directory;
    const keys = Array.from({ length: MAX_RETAINED + 1 }, (_, i) => keyNamed(`left-${i}`));
    for (const key of keys.slice(0, MAX_RETAINED)) setup.leave(key);
    expect(directory.size).toBe(MAX_RETAINED);
    expect(directory.get(keys[0]!)).toBeDefined();

    setup.leave(keys[MAX_RETAINED]!);
    expect(directory.size).toBe(MAX_RETAINED);
    expect(directory.get(keys[0]!)).toBeUndefined();
    expect(directory.get(keys[1]!)).toBeDefined();
    expect(directory.get(keys[MAX_RETAINED]!)).toBeDefined();
  }, 60_000);
});
