// The memory store's change log (docs/design.md "The store"): positions, the cap and its chunked trim,
// following from a position, and the positions it cannot follow from (PositionLostError).
import { describe, expect, it } from 'vitest';
import { MemoryChangeLog } from '../../src/store/memory-change-log.js';
import { PositionLostError, type LeaseEvent } from '../../src/store/types.js';

const lapse = (key: string) => ({ type: 'lapse' as const, key, atMs: 1 });

/** The events after `position` that are there now, then stop. */
async function drain(log: MemoryChangeLog, position: string): Promise<LeaseEvent[]> {
  const controller = new AbortController();
  const events: LeaseEvent[] = [];
  // Settled at once, so a refused position is not an unhandled rejection while the test waits.
  const reading = (async () => {
    for await (const event of log.follow(position, controller.signal)) events.push(event);
  })().then(
    () => undefined,
    (error: unknown) => error,
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort();
  const error = await reading;
  if (error !== undefined) throw error;
  return events;
}

describe('MemoryChangeLog', () => {
  it('numbers events from 1; position is the newest, "0" before any', () => {
    const log = new MemoryChangeLog({ cap: 10 });
    expect(log.position).toBe('0');
    log.append(lapse('a'));
    log.append(lapse('b'));
    expect(log.position).toBe('2');
  });

  it('follows from a position: the events after it, in order, each positioned', async () => {
    const log = new MemoryChangeLog({ cap: 10 });
    for (const key of ['a', 'b', 'c']) log.append(lapse(key));
    expect(await drain(log, '1')).toEqual([
      { type: 'lapse', key: 'b', atMs: 1, position: '2' },
      { type: 'lapse', key: 'c', atMs: 1, position: '3' },
    ]);
    expect(await drain(log, '0')).toHaveLength(3);
    expect(await drain(log, '3')).toEqual([]);
  });

  it('wakes a follower on each append, and ends it on close', async () => {
    const log = new MemoryChangeLog({ cap: 10 });
    const events: LeaseEvent[] = [];
    const reading = (async () => {
      for await (const event of log.follow('0', new AbortController().signal)) events.push(event);
    })();
    log.append(lapse('a'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    log.append(lapse('b'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    log.close();
    await reading;
    expect(events.map((e) => e.position)).toEqual(['1', '2']);
  });

  it('delivers a copy to each follower', async () => {
    const log = new MemoryChangeLog({ cap: 10 });
    log.append(lapse('a'));
    const [first] = await drain(log, '0');
    (first as { key: string }).key = 'changed';
    expect((await drain(log, '0'))[0]).toMatchObject({ key: 'a' });
  });

  it('keeps at least cap events, trimming in chunks of a tenth of the cap', async () => {
    const log = new MemoryChangeLog({ cap: 10 });
    // 11 events (cap + slack of 1) are kept; the 12th trims back to 10.
    for (let i = 1; i <= 11; i += 1) log.append(lapse(`k${i}`));
    expect(await drain(log, '0')).toHaveLength(11);
    log.append(lapse('k12'));
    await expect(drain(log, '0')).rejects.toThrow(PositionLostError);
    await expect(drain(log, '1')).rejects.toThrow(PositionLostError);
    expect((await drain(log, '2')).map((e) => e.position)).toEqual(['3', '4', '5', '6', '7', '8', '9', '10', '11', '12']);

    const big = new MemoryChangeLog({ cap: 100 });
    for (let i = 1; i <= 110; i += 1) big.append(lapse(`k${i}`));
    expect(await drain(big, '0')).toHaveLength(110);
    big.append(lapse('k111'));
    expect((await drain(big, '11')).map((e) => e.position)[0]).toBe('12');
    await expect(drain(big, '10')).rejects.toThrow('the change log no longer reaches back to position 10');
  });

  it('awaits `reached` once the position is found, before the first event; not for a position it cannot follow from', async () => {
    const log = new MemoryChangeLog({ cap: 10 });
    for (const key of ['a', 'b']) log.append(lapse(key));
    const order: string[] = [];
    const controller = new AbortController();
    const reached = async () => {
      order.push('reached');
      // Awaited: nothing is yielded until it settles.
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push('settled');
    };
    for await (const event of log.follow('1', controller.signal, reached)) {
      order.push(event.position);
      controller.abort();
    }
    expect(order).toEqual(['reached', 'settled', '2']);
    const refused: string[] = [];
    await expect(
      (async () => {
        for await (const _ of log.follow('5', new AbortController().signal, async () => void refused.push('reached'))) void _;
      })(),
    ).rejects.toThrow(PositionLostError);
    expect(refused).toEqual([]);
  });

  it('refuses positions it never had or cannot have', async () => {
    const log = new MemoryChangeLog({ cap: 10 });
    log.append(lapse('a'));
    for (const position of ['2', '-1', '01', 'x', '', '1.0', '1e0', '12345678901234567']) {
      await expect(drain(log, position), position).rejects.toThrow(PositionLostError);
    }
    expect(await drain(log, '1')).toEqual([]);
  });

  it('a follower that fell behind the trim while reading loses its position', async () => {
    const log = new MemoryChangeLog({ cap: 2 });
    for (const key of ['a', 'b']) log.append(lapse(key));
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of log.follow('0', new AbortController().signal)) {
        seen.push(event.position);
        if (event.position === '1') for (const key of ['c', 'd', 'e', 'f']) log.append(lapse(key));
      }
    })();
    await expect(reading).rejects.toThrow(PositionLostError);
    expect(seen).toEqual(['1']);
  });

  it('the cap is a positive integer', () => {
    for (const cap of [0, -1, 1.5, NaN]) {
      expect(() => new MemoryChangeLog({ cap })).toThrow(`changeLogCap must be a positive integer, got ${cap}`);
    }
    expect(() => new MemoryChangeLog({ cap: 1 })).not.toThrow();
  });

  it('an aborted follow ends without reading', async () => {
    const log = new MemoryChangeLog({ cap: 10 });
    log.append(lapse('a'));
    const controller = new AbortController();
    controller.abort();
    const events: LeaseEvent[] = [];
    for await (const event of log.follow('0', controller.signal)) events.push(event);
    expect(events).toEqual([]);
  });
});
