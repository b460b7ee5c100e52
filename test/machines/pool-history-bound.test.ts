// The bound of a pool's /debug history (docs/contract.md §3 and the API table: "last 50 transitions"):
// a pool actor created as the join creates it (no historyLimit) keeps exactly its 50 newest transitions,
// however many it takes, so a pool that flaps for days costs no more memory than one that flapped once.
import { createActor, SimulatedClock } from 'xstate';
import { describe, expect, it } from 'vitest';
import { poolMachine } from '../../machines/pool.machine.js';
import { KEY, LEASE_MS, stamped } from './pool-events.js';

describe('pool history with the default limit', () => {
  it('holds the 50 newest transitions, in order, after thousands', () => {
    const actor = createActor(poolMachine, { input: { key: KEY, mode: 'registrations', leaseMs: LEASE_MS, at: 0 }, clock: new SimulatedClock() });
    actor.start();
    // absent → live once, then live ⇄ frontendless: one transition per event.
    const events = 5_000;
    for (let at = 1; at <= events; at += 1) actor.send(stamped(at % 2 === 1 ? 'UPSERT_F' : 'UPSERT_0', at));
    const { history } = actor.getSnapshot().context;
    actor.stop();

    expect(history).toHaveLength(50);
    expect(history.map((entry) => entry.at)).toEqual(Array.from({ length: 50 }, (_, i) => events - 49 + i));
    expect(history.at(-1)).toEqual({ at: events, event: 'LEASE_UPSERT', from: 'live', to: 'frontendless' });
  });
});
