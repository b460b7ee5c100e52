// The directory holds one machine snapshot per pool (docs/design.md "The actors"): a pool first seen through
// its lease starts where the machine itself would have taken it, without running it when that state's entry
// has no effect; every step reports the chart's transitions taken; delayed events are scheduled and
// cancelled on the clock as the machine's `after` asks.
import { initialTransition, transition, type AnyTransitionDefinition } from 'xstate';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { poolKey, type PoolKey } from '../../src/contract/index.js';
import { PoolDirectory, quietEntries, type PoolDirectoryOptions, type PoolStep } from '../../src/join/pool-directory.js';
import { poolMachine, type PoolEvent, type PoolMode } from '../../machines/pool.machine.js';
import { EVENTS, LEASE_MS, type EventName } from '../machines/pool-events.js';
import { captureLogs } from '../support/logs.js';
import { directoryOnTestClocks } from './support.js';
import { registration } from '../support/registration.js';

const A = poolKey(registration({ name: 'pool-a' }));
const NOW = 1_700_000_000_000;
const directories: PoolDirectory[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) directory.stop();
  vi.restoreAllMocks();
});

function directoryFor(mode: PoolMode, options: Partial<PoolDirectoryOptions> = {}) {
  const steps: PoolStep[] = [];
  const { directory, wall, advance } = directoryOnTestClocks(mode, { inspect: (step) => steps.push(step), ...options }, NOW);
  directories.push(directory);
  return { directory, steps, advance, wall };
}

/** What the machine itself makes of a new pool and its first event (xstate's pure transition). */
function machinePath(mode: PoolMode, event: PoolEvent, historyLimit?: number) {
  const [initial] = initialTransition(poolMachine, { key: A, mode, leaseMs: LEASE_MS, at: event.at, historyLimit });
  const [next] = transition(poolMachine, initial, event);
  return { value: next.value, context: next.context };
}

const FIRST_LEASES: Array<{ name: string; event: Omit<Extract<PoolEvent, { type: 'LEASE_UPSERT' }>, 'at'> }> = [
  { name: 'with frontends', event: { ...(EVENTS.UPSERT_F as Extract<PoolEvent, { type: 'LEASE_UPSERT' }>) } },
  { name: 'without frontends', event: { ...(EVENTS.UPSERT_0 as Extract<PoolEvent, { type: 'LEASE_UPSERT' }>) } },
  {
    name: 'of a region, with its content change',
    event: { type: 'LEASE_UPSERT', registration: registration({ name: 'pool-a' }), deadlineMs: 9_000, region: 'r2', changedAtMs: 1234 },
  },
];

describe('PoolDirectory: a pool first seen through its lease', () => {
  for (const mode of ['registrations', 'mcs'] as const) {
    it.each(FIRST_LEASES)(`${mode}: starts where the machine takes it, a lease $name`, ({ event }) => {
      const { directory } = directoryFor(mode, { historyLimit: 7 });
      directory.send(A, event);
      const snapshot = directory.snapshot(A)!;
      expect({ value: snapshot.value, context: snapshot.context }).toEqual(machinePath(mode, { ...event, at: NOW } as PoolEvent, 7));
      expect(snapshot.status).toBe('active');
      expect(directory.get(A)!.getSnapshot()).toBe(snapshot);
    });
  }

  it('starts every later pool of the same state with its own context, and each moves on its own', () => {
    const { directory } = directoryFor('registrations');
    const B = poolKey(registration({ name: 'pool-b' }));
    const leaseOfB = { type: 'LEASE_UPSERT' as const, registration: registration({ name: 'pool-b' }), deadlineMs: 7_000, changedAtMs: 5 };
    directory.send(A, EVENTS.UPSERT_F);
    directory.send(B, leaseOfB);
    const b = directory.snapshot(B)!;
    const [initialOfB] = initialTransition(poolMachine, { key: B, mode: 'registrations', leaseMs: LEASE_MS, at: NOW });
    const [machineB] = transition(poolMachine, initialOfB, { ...leaseOfB, at: NOW });
    expect({ value: b.value, context: b.context }).toEqual({ value: machineB.value, context: machineB.context });
    expect(b.matches('live')).toBe(true);
    expect(b.context).not.toBe(directory.snapshot(A)!.context);
    // What the two snapshots share is the state's: resolved once, not once per pool.
    expect(b._nodes).toBe(directory.snapshot(A)!._nodes);

    directory.send(A, EVENTS.UPSERT_0);
    expect(directory.snapshot(A)!.value).toBe('frontendless');
    expect(directory.snapshot(B)!.value).toBe('live');
    expect(directory.snapshot(B)!.context.history).toEqual([{ at: NOW, event: 'LEASE_UPSERT', from: 'absent', to: 'live' }]);
    directory.send(B, EVENTS.LAPSE);
    expect(directory.snapshot(B)!.value).toBe('lapsed');
    expect(directory.snapshot(A)!.value).toBe('frontendless');
  });

  it('runs no machine transition for a pool that starts live, and the machine for one whose entry warns', () => {
    const proto = Object.getPrototypeOf(poolMachine) as { transition: (...args: unknown[]) => unknown };
    const transitions = vi.spyOn(proto, 'transition');
    const { logger, warnings } = captureLogs('warn');
    const { directory } = directoryFor('registrations', { logger });
    directory.send(A, EVENTS.UPSERT_F);
    expect(directory.snapshot(A)!.value).toBe('live');
    expect(transitions).not.toHaveBeenCalled();

    const B = poolKey(registration({ name: 'pool-b' }));
    directory.send(B, EVENTS.UPSERT_0);
    expect(directory.snapshot(B)!.value).toBe('frontendless');
    expect(transitions).toHaveBeenCalledTimes(1);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ pool: B, state: 'frontendless' });
  });

  it('reports its first step with no snapshot before it and the chart transition into its state', () => {
    const { directory, steps } = directoryFor('registrations');
    directory.send(A, EVENTS.UPSERT_F);
    expect(steps).toHaveLength(1);
    const [step] = steps;
    expect(step).toMatchObject({ kind: 'step', key: A, before: undefined, event: { type: 'LEASE_UPSERT', at: NOW } });
    if (step?.kind !== 'step') throw new Error('not a step');
    expect(step.taken.map(transitionText)).toEqual(['absent→live if isLive']);

    directory.send(A, EVENTS.UPSERT_0);
    const second = steps[1]!;
    if (second.kind !== 'step') throw new Error('not a step');
    expect(second.before).toBe(step.snapshot);
    expect(second.taken.map(transitionText)).toEqual(['live→frontendless if isFrontendless']);
  });

  it('reports the machine’s transitions for a pool that starts through the machine', () => {
    const { directory, steps } = directoryFor('mcs');
    directory.send(A, EVENTS.SLICES_RF);
    const step = steps[0]!;
    if (step.kind !== 'step') throw new Error('not a step');
    expect(step.before).toBeUndefined();
    expect(step.taken.map(transitionText)).toEqual(['absent→unregistered if isUnregistered']);
    expect(step.snapshot.context.history).toEqual([{ at: NOW, event: 'SLICES', from: 'absent', to: 'unregistered' }]);
  });
});

describe('quietEntries', () => {
  it('names the states a pool may start in without the machine: those whose entry only assigns', () => {
    const entries = quietEntries(poolMachine);
    expect([...entries.keys()]).toEqual(['live']);
    expect(transitionText(entries.get('live')!)).toBe('absent→live if isLive');
  });

  it('leaves out a state whose entry runs a provided effect', () => {
    const quiet = poolMachine.provide({ actions: { warnFrontendless: () => {} } });
    expect(quietEntries(quiet).has('frontendless')).toBe(false);
  });
});

describe('PoolDirectory: delayed events', () => {
  const send = (directory: PoolDirectory, name: EventName) => directory.send(A, EVENTS[name]);

  it('cancels a stuck timer when the pool leaves the state before it fires', () => {
    const { logger, warnings } = captureLogs('warn');
    const { directory, advance } = directoryFor('mcs', { logger });
    send(directory, 'UPSERT_F'); // one-sided
    expect(directory.pendingDelays).toBe(1);
    advance(2 * LEASE_MS - 1);
    send(directory, 'SLICES_RF'); // live
    expect(directory.pendingDelays).toBe(0);
    advance(10 * LEASE_MS);
    expect(warnings()).toEqual([]);
  });

  it('schedules anew on each entry, and fires once, two leases after the last entry', () => {
    const { logger, warnings } = captureLogs('warn');
    const { directory, advance, wall } = directoryFor('mcs', { logger });
    send(directory, 'UPSERT_F'); // one-sided
    advance(LEASE_MS);
    send(directory, 'SLICES_RF'); // live
    send(directory, 'SLICES_00'); // one-sided again
    const enteredAt = wall.now;
    expect(directory.pendingDelays).toBe(1);
    advance(2 * LEASE_MS - 1);
    expect(warnings()).toEqual([]);
    advance(1);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ pool: A, state: 'one-sided', since: new Date(enteredAt).toISOString() });
    expect(directory.pendingDelays).toBe(0);
    advance(10 * LEASE_MS);
    expect(warnings()).toHaveLength(1);
  });

  it('keeps the delayed events of each pool apart', () => {
    const { logger, warnings } = captureLogs('warn');
    const { directory, advance } = directoryFor('mcs', { logger });
    const B = poolKey(registration({ name: 'pool-b' }));
    send(directory, 'UPSERT_F'); // A one-sided
    directory.send(B, EVENTS.SLICES_RF); // B unregistered
    expect(directory.pendingDelays).toBe(2);
    send(directory, 'SLICES_RF'); // A live: only its timer goes
    expect(directory.pendingDelays).toBe(1);
    advance(2 * LEASE_MS);
    expect(warnings().map((w) => [w.pool, w.state])).toEqual([[B, 'unregistered']]);
  });

  it('runs the real clock by default, and forgets a pool’s timer with the pool', () => {
    vi.useFakeTimers();
    try {
      const { logger, warnings } = captureLogs('warn');
      const directory = new PoolDirectory({
        mode: 'mcs',
        leaseMs: LEASE_MS,
        logger,
        frontendServiceSuffix: '-frontend',
        frontendPortName: 'http',
        onSnapshot: () => {},
        retentionMs: 0,
      });
      directories.push(directory);
      send(directory, 'UPSERT_F'); // one-sided
      vi.advanceTimersByTime(2 * LEASE_MS);
      expect(warnings()).toHaveLength(1);
      send(directory, 'SLICES_RF'); // live
      send(directory, 'LAPSE'); // unregistered: a new timer
      expect(directory.pendingDelays).toBe(1);
      send(directory, 'SLICES_00'); // absent: left
      directory.forgetLeft();
      expect(directory.size).toBe(0);
      expect(directory.pendingDelays).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(10 * LEASE_MS);
      expect(warnings()).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

function transitionText(transition: AnyTransitionDefinition): string {
  const guard = transition.guard as { type?: string } | string | undefined;
  const name = typeof guard === 'string' ? guard : guard?.type;
  return `${transition.source.key}→${transition.target![0]!.key} if ${name}`;
}
