// The region feed's log lines carry `region` once, and not at all without regions (docs/operations.md):
// a store or region that cannot be read, read again, refilled after losing its data.
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Join } from '../../src/join/join.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { duplicateKeys } from '../support/log-lines.js';
import { registration } from '../support/registration.js';
import { waitFor } from '../support/wait.js';

const running: Join[] = [];
afterEach(async () => {
  for (const join of running.splice(0)) await join.stop();
});

function rawLogger() {
  const raw: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void raw.push(line) });
  const lines = () => raw.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, raw, lines };
}

describe('log lines of the store and region feeds', () => {
  it('without regions: no line carries "region" (not even an empty one)', async () => {
    const store = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    const { logger, raw, lines } = rawLogger();
    const join = new Join({ poolDiscovery: 'registrations', leaseMs: 60_000, store, logger, storeBackoff: { initialMs: 20, maxMs: 40 } });
    running.push(join);
    join.start();
    await store.heartbeat(registration());
    await waitFor(() => join.view.list().pools.length === 1);
    store.setCut(true);
    await waitFor(() => lines().some((line) => line.level === 40));
    store.setCut(false);
    // The home store's own line (a followed region's is `region read again`).
    await waitFor(() => lines().some((line) => line.msg === 'store read again'));
    expect(raw.length).toBeGreaterThan(2);
    for (const line of raw) {
      expect(line).not.toContain('"region"');
      expect(duplicateKeys(line)).toEqual([]);
    }
  });

  it('with regions: a followed region\'s lines carry its "region" once', async () => {
    const r1 = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    const r2 = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    const { logger, raw, lines } = rawLogger();
    const join = new Join({
      poolDiscovery: 'registrations',
      leaseMs: 60_000,
      store: r1,
      regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs: 200 },
      logger,
      storeBackoff: { initialMs: 20, maxMs: 40 },
    });
    running.push(join);
    join.start();
    await r2.heartbeat(registration());
    await waitFor(() => join.view.list().pools.length === 1);
    r2.setCut(true);
    await waitFor(() => lines().some((line) => line.msg === 'region unreadable for longer than the hold; dropping its pools until it is read again'));
    r2.setCut(false);
    await waitFor(() => lines().some((line) => line.msg === 'region read again'));
    const regionLines = raw.filter((line) => line.includes('"region"'));
    expect(regionLines.length).toBeGreaterThanOrEqual(3);
    for (const line of raw) expect(duplicateKeys(line), line).toEqual([]);
    for (const message of ['region cannot be read; holding its pools', 'region read again']) {
      expect(lines().find((line) => line.msg === message)).toMatchObject({ region: 'r2' });
    }
  });
});
