// The pool chart with leases in several regions (docs/contract.md §7): the lease side is live while any
// region holds a lease, the registration shown is the latest content change (ties: the region name that
// sorts first), and a dropped region counts as a lapse of that region's lease only.
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { chooseLease, leaseRegions, NO_REGION, poolMachine, type PoolEvent } from '../../machines/pool.machine.js';
import { registration } from '../support/registration.js';
import { KEY, LEASE_MS } from './pool-events.js';

type Unstamped = PoolEvent extends infer E ? (E extends unknown ? Omit<E, 'at'> : never) : never;

function start(mode: 'registrations' | 'mcs' = 'registrations') {
  const actor = createActor(poolMachine, { input: { key: KEY, mode, leaseMs: LEASE_MS, at: 0 } }).start();
  let at = 0;
  const send = (event: Unstamped) => actor.send({ ...event, at: ++at } as PoolEvent);
  return { actor, send, context: () => actor.getSnapshot().context, state: () => actor.getSnapshot().value };
}

const EAST = registration({ model: 'east-model' });
const WEST = registration({ model: 'west-model' });

describe('pool machine across regions', () => {
  it('stays live while any region holds a lease, and lapses when the last one lapses', () => {
    const pool = start();
    pool.send({ type: 'LEASE_UPSERT', region: 'us-east-1', registration: EAST, deadlineMs: 100, changedAtMs: 10 });
    pool.send({ type: 'LEASE_UPSERT', region: 'eu-west-1', registration: WEST, deadlineMs: 200, changedAtMs: 20 });
    expect(pool.state()).toBe('live');
    expect(leaseRegions(pool.context())).toEqual(['eu-west-1', 'us-east-1']);
    expect(pool.context().leaseDeadlineMs).toBe(200);

    pool.send({ type: 'LEASE_LAPSED', region: 'eu-west-1' });
    expect(pool.state()).toBe('live');
    expect(leaseRegions(pool.context())).toEqual(['us-east-1']);
    expect(pool.context().registration?.model).toBe('east-model');
    expect(pool.context().leaseDeadlineMs).toBe(100);

    pool.send({ type: 'LEASE_LAPSED', region: 'us-east-1' });
    expect(pool.state()).toBe('lapsed');
    expect(pool.context().lease).toBe('lapsed');
    // The last registration stays visible for /debug.
    expect(pool.context().registration?.model).toBe('east-model');
  });

  it('shows the registration with the highest version, whatever the order the regions were read in', () => {
    // B's clock runs ahead: its change time is later, but A's change has the higher version.
    const first = start();
    first.send({ type: 'LEASE_UPSERT', region: 'b', registration: EAST, deadlineMs: 500, version: 1, changedAtMs: 30 });
    first.send({ type: 'LEASE_UPSERT', region: 'a', registration: WEST, deadlineMs: 900, version: 2, changedAtMs: 10 });
    const second = start();
    second.send({ type: 'LEASE_UPSERT', region: 'a', registration: WEST, deadlineMs: 900, version: 2, changedAtMs: 10 });
    second.send({ type: 'LEASE_UPSERT', region: 'b', registration: EAST, deadlineMs: 500, version: 1, changedAtMs: 30 });
    expect(first.context().registration?.model).toBe('west-model');
    expect(second.context().registration?.model).toBe('west-model');
  });

  it('breaks a tie of versions by the region name that sorts first', () => {
    expect(
      chooseLease({
        'eu-west-1': { registration: WEST, version: 7, changedAtMs: 9, deadlineMs: 1, receipt: 0 },
        'ap-south-1': { registration: EAST, version: 7, changedAtMs: 7, deadlineMs: 1, receipt: 0 },
      })?.registration.model,
    ).toBe('east-model');
    expect(chooseLease({})).toBeUndefined();
  });

  it('treats REGION_DROPPED as the end of that region’s lease only, and records it in the history', () => {
    const pool = start();
    pool.send({ type: 'LEASE_UPSERT', region: 'r1', registration: EAST, deadlineMs: 100, changedAtMs: 10 });
    pool.send({ type: 'LEASE_UPSERT', region: 'r2', registration: WEST, deadlineMs: 100, changedAtMs: 20 });
    pool.send({ type: 'REGION_DROPPED', region: 'r2' });
    expect(pool.state()).toBe('live');
    expect(pool.context().registration?.model).toBe('east-model');
    pool.send({ type: 'REGION_DROPPED', region: 'r1' });
    expect(pool.state()).toBe('lapsed');
    expect(pool.context().history.at(-1)).toMatchObject({ event: 'REGION_DROPPED', from: 'live', to: 'lapsed' });
  });

  it('ignores a lapse or a drop of a region that holds no lease for the pool', () => {
    const pool = start();
    pool.send({ type: 'LEASE_UPSERT', region: 'r1', registration: EAST, deadlineMs: 100, changedAtMs: 10 });
    const before = pool.context();
    pool.send({ type: 'LEASE_LAPSED', region: 'r2' });
    pool.send({ type: 'REGION_DROPPED', region: 'r3' });
    expect(pool.state()).toBe('live');
    expect(pool.context().leases).toEqual(before.leases);
    expect(pool.context().history).toHaveLength(before.history.length);
  });

  it('in MCS modes, a drop of the only lease region while the relay is Ready is a lapse (stale MCS)', () => {
    const pool = start('mcs');
    pool.send({ type: 'SLICES', relays: ['http://10.1.0.9:9000'], frontends: ['http://10.1.0.7:8000'], frontendSlicesWithPort: true });
    pool.send({ type: 'LEASE_UPSERT', region: 'r1', registration: EAST, deadlineMs: 100, changedAtMs: 10 });
    expect(pool.state()).toBe('live');
    pool.send({ type: 'REGION_DROPPED', region: 'r1' });
    expect(pool.state()).toBe('lapsed');
  });

  it('without regions, events carry no region and the one lease is the region ""', () => {
    const pool = start();
    pool.send({ type: 'LEASE_UPSERT', registration: EAST, deadlineMs: 100 });
    expect(Object.keys(pool.context().leases)).toEqual([NO_REGION]);
    pool.send({ type: 'LEASE_LAPSED' });
    expect(pool.state()).toBe('lapsed');
    expect(pool.context().leases).toEqual({});
  });
});
