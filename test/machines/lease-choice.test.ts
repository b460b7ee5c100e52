// Which region's registration a pool shows (docs/contract.md §7: the highest version, that is the latest
// content change in the order its writers saw the changes, ties to the region name that sorts first, so
// every replica shows the same one; never the regions' clocks), the frontends a pool offers, and
// the facts a new pool starts from (shown on /debug/pools).
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { chooseLease, classify, frontendsOf, NO_REGION, poolMachine, type PoolContext, type RegionLease } from '../../machines/pool.machine.js';
import { registration } from '../support/registration.js';

const lease = (name: string, version: number, changedAtMs = 1000): RegionLease => ({
  registration: registration({ name }),
  version,
  changedAtMs,
  deadlineMs: 10_000,
  receipt: 0,
});

describe('chooseLease', () => {
  it('shows the registration with the highest version, whatever the region names', () => {
    expect(chooseLease({ a: lease('older', 1), b: lease('newer', 2) })?.registration.name).toBe('newer');
    expect(chooseLease({ b: lease('newer', 2), a: lease('older', 1) })?.registration.name).toBe('newer');
  });

  it("never by the regions' clocks: a later change time with a lower version is not shown", () => {
    expect(chooseLease({ a: lease('newer', 3, 1000), b: lease('older', 2, 31_000) })?.registration.name).toBe('newer');
    expect(chooseLease({ b: lease('older', 2, 31_000), a: lease('newer', 3, 1000) })?.registration.name).toBe('newer');
    expect(chooseLease({ a: lease('from-a', 4, 1000), b: lease('from-b', 4, 99_000) })?.registration.name).toBe('from-a');
  });

  it('on a tie, the region whose name sorts first, in either order', () => {
    expect(chooseLease({ a: lease('from-a', 5), b: lease('from-b', 5) })?.registration.name).toBe('from-a');
    expect(chooseLease({ b: lease('from-b', 5), a: lease('from-a', 5) })?.registration.name).toBe('from-a');
    expect(chooseLease({ 'eu-west-1': lease('eu', 5), [NO_REGION]: lease('none', 5), 'us-east-1': lease('us', 5) })?.registration.name).toBe('none');
  });

  it('none without a lease; the region of a store without regions is named ""', () => {
    expect(chooseLease({})).toBeUndefined();
    expect(NO_REGION).toBe('');
  });
});

describe('the facts of a new pool', () => {
  it('no lease seen, no registration, no MCS endpoints, absent', () => {
    const actor = createActor(poolMachine, { input: { key: 'c/ns/p', mode: 'mcs', leaseMs: 1000, at: 7 } });
    actor.start();
    expect(actor.getSnapshot().value).toBe('absent');
    expect(actor.getSnapshot().context).toEqual({
      key: 'c/ns/p',
      mode: 'mcs',
      leaseMs: 1000,
      historyLimit: 50,
      lease: 'none',
      leases: {},
      registration: null,
      leaseDeadlineMs: null,
      relays: [],
      mcsFrontends: [],
      frontendSlicesWithPort: false,
      state: 'absent',
      since: 7,
      history: [],
    });
    actor.stop();
    expect(poolMachine.id).toBe('pool');
  });

  it('registrations mode: a pool without a lease seen is absent, with no frontends', () => {
    const context = { mode: 'registrations', lease: 'none', registration: null, relays: [], mcsFrontends: ['http://x:1'] } as unknown as PoolContext;
    expect(frontendsOf(context)).toEqual([]);
    expect(classify(context)).toBe('absent');
  });
});
