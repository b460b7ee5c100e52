// The pool chart of docs/contract.md §3, checked against expectations written from the contract (not from
// `classify`), through every state × event pair, through paths that xstate/graph generates, and through
// a long seeded random walk; plus the two-lease warnings on a simulated clock, and the history.
import { createActor, SimulatedClock, type Actor } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PoolState } from '../../src/contract/index.js';
import { classify, poolMachine, type PoolMode, type PoolEvent } from '../../machines/pool.machine.js';
import { seededRandom } from '../../src/util/random.js';
import { registration } from '../support/registration.js';
import { EVENT_NAMES, EVENTS, KEY, LEASE_MS, stamped, type EventName } from './pool-events.js';

const actors: Actor<typeof poolMachine>[] = [];
afterEach(() => {
  for (const actor of actors.splice(0)) actor.stop();
});

function startPool(options: { mode: PoolMode; historyLimit?: number; machine?: typeof poolMachine; clock?: SimulatedClock }) {
  const actor = createActor(options.machine ?? poolMachine, {
    input: { key: KEY, mode: options.mode, leaseMs: LEASE_MS, at: 0, historyLimit: options.historyLimit },
    clock: options.clock ?? new SimulatedClock(),
  });
  actors.push(actor);
  actor.start();
  return actor;
}

// ── The transition table ───────────────────────────────────────────────────────────────────────────
// One row per situation: the paths to it from a new actor (label: setup), and the state each event kind leads to,
// in the order of EVENT_NAMES: UPSERT_F, UPSERT_0, LAPSE, SLICES_RF, SLICES_R0, SLICES_00, SLICES_0F.
// Written from docs/contract.md §3: in `mcs` mode a pool is listed when the lease is live and MCS shows a
// Ready PoolRelay, `live` with a frontend from MCS and `frontendless` without (the registration's own
// frontends do not count); `unregistered` = Ready relay, no live lease seen; `one-sided` = live lease, no
// Ready relay; `lapsed` = the lease lapsed while MCS still shows a Ready relay; neither side = `absent`.
// In `registrations` mode the lease alone decides and MCS facts change nothing.
interface Situation {
  mode: PoolMode;
  state: PoolState;
  next: [PoolState, PoolState, PoolState, PoolState, PoolState, PoolState, PoolState];
  paths: Record<string, EventName[]>;
}

const SITUATIONS: Situation[] = [
  // mcs
  {
    mode: 'mcs',
    state: 'absent',
    next: ['one-sided', 'one-sided', 'absent', 'unregistered', 'unregistered', 'absent', 'absent'],
    paths: {
      new: [],
      'after a frontend-only slice': ['SLICES_0F'],
      // It forgot the lapsed lease: a Ready relay seen later is `unregistered`, not `lapsed`.
      'after leaving': ['SLICES_RF', 'UPSERT_F', 'LAPSE', 'SLICES_00'],
      // The lease lapsed while MCS showed no relay: nothing is stale, so a relay seen later is `unregistered`.
      'after a lapse seen while MCS listed nothing': ['LAPSE'],
    },
  },
  // A lapse of the store's lease while MCS shows the relay: the lease lapsed, MCS still shows it.
  { mode: 'mcs', state: 'unregistered', next: ['live', 'live', 'lapsed', 'unregistered', 'unregistered', 'absent', 'absent'], paths: { 'relay and frontend': ['SLICES_RF'] } },
  { mode: 'mcs', state: 'unregistered', next: ['frontendless', 'frontendless', 'lapsed', 'unregistered', 'unregistered', 'absent', 'absent'], paths: { 'relay only': ['SLICES_R0'] } },
  {
    mode: 'mcs',
    state: 'one-sided',
    next: ['one-sided', 'one-sided', 'absent', 'live', 'frontendless', 'one-sided', 'one-sided'],
    paths: { 'lease only': ['UPSERT_F'], 'lease and frontend-only slice': ['SLICES_0F', 'UPSERT_0'] },
  },
  {
    mode: 'mcs',
    state: 'live',
    next: ['live', 'live', 'lapsed', 'live', 'frontendless', 'one-sided', 'one-sided'],
    paths: { 'both sides': ['SLICES_RF', 'UPSERT_F'], 'lease without frontends (MCS has them)': ['UPSERT_0', 'SLICES_RF'] },
  },
  { mode: 'mcs', state: 'frontendless', next: ['frontendless', 'frontendless', 'lapsed', 'live', 'frontendless', 'one-sided', 'one-sided'], paths: { 'relay, no frontend': ['SLICES_R0', 'UPSERT_F'] } },
  { mode: 'mcs', state: 'lapsed', next: ['live', 'live', 'lapsed', 'lapsed', 'lapsed', 'absent', 'absent'], paths: { 'relay and frontend': ['SLICES_RF', 'UPSERT_F', 'LAPSE'] } },
  { mode: 'mcs', state: 'lapsed', next: ['frontendless', 'frontendless', 'lapsed', 'lapsed', 'lapsed', 'absent', 'absent'], paths: { 'relay only': ['SLICES_R0', 'UPSERT_F', 'LAPSE'] } },
  // registrations: the lease alone decides (the store says the lease lapsed: `lapsed` even from `absent`).
  { mode: 'registrations', state: 'absent', next: ['live', 'frontendless', 'lapsed', 'absent', 'absent', 'absent', 'absent'], paths: { new: [] } },
  { mode: 'registrations', state: 'live', next: ['live', 'frontendless', 'lapsed', 'live', 'live', 'live', 'live'], paths: { 'lease with frontends': ['UPSERT_F'] } },
  {
    mode: 'registrations',
    state: 'frontendless',
    next: ['live', 'frontendless', 'lapsed', 'frontendless', 'frontendless', 'frontendless', 'frontendless'],
    paths: { 'lease without frontends': ['UPSERT_0'] },
  },
  {
    mode: 'registrations',
    state: 'lapsed',
    next: ['live', 'frontendless', 'lapsed', 'lapsed', 'lapsed', 'lapsed', 'lapsed'],
    paths: { 'lapsed lease': ['UPSERT_F', 'LAPSE'], 'lapsed after MCS facts': ['SLICES_RF', 'UPSERT_0', 'LAPSE'] },
  },
];

const ROWS = SITUATIONS.flatMap((s) =>
  Object.entries(s.paths).flatMap(([label, setup]) =>
    EVENT_NAMES.map((event, i) => ({ mode: s.mode, from: s.state, label, setup, event, to: s.next[i]! })),
  ),
);

describe('pool chart: every state × event', () => {
  it('covers every state the contract names in mcs mode, and live/frontendless/lapsed in registrations mode', () => {
    const covered = (mode: PoolMode) => new Set(SITUATIONS.filter((s) => s.mode === mode).map((s) => s.state));
    expect([...covered('mcs')].sort()).toEqual(['absent', 'frontendless', 'lapsed', 'live', 'one-sided', 'unregistered']);
    expect([...covered('registrations')].sort()).toEqual(['absent', 'frontendless', 'lapsed', 'live']);
  });

  it.each(ROWS)('$mode: $from ($label) --$event--> $to', ({ mode, from, setup, event, to }) => {
    const actor = startPool({ mode });
    let at = 0;
    for (const name of setup) actor.send(stamped(name, (at += 10)));
    expect(actor.getSnapshot().value).toBe(from);

    const before = actor.getSnapshot().context.history.length;
    actor.send(stamped(event, (at += 10)));
    const snapshot = actor.getSnapshot();
    expect(snapshot.value).toBe(to);
    expect(snapshot.context.state).toBe(to);
    const history = snapshot.context.history;
    if (to === from) {
      // No re-entry when the event changes nothing about the state.
      expect(history).toHaveLength(before);
    } else {
      // One event moves at most once, straight to where the facts lead (never through another state).
      expect(history).toHaveLength(before + 1);
      expect(history.at(-1)).toEqual({ at, event: EVENTS[event].type, from, to });
      expect(snapshot.context.since).toBe(at);
    }
  });

  it('in mcs mode the frontends come from MCS, never from the registration', () => {
    const actor = startPool({ mode: 'mcs' });
    actor.send(stamped('SLICES_R0', 1));
    actor.send({ type: 'LEASE_UPSERT', at: 2, registration: registration({ frontends: ['http://10.9.9.9:80'] }), deadlineMs: 9 });
    expect(actor.getSnapshot().value).toBe('frontendless');
  });
});

// ── Paths generated by xstate/graph ────────────────────────────────────────────────────────────────
describe('pool chart: generated paths', () => {
  const representative: PoolEvent[] = EVENT_NAMES.map((name) => stamped(name, 0));

  function shortestPaths(mode: PoolMode) {
    return getShortestPaths(poolMachine, {
      input: { key: KEY, mode, leaseMs: LEASE_MS, at: 0 },
      events: representative,
      // The facts that decide the state, not the history (which grows without bound).
      serializeState: (snapshot) => {
        const c = snapshot.context;
        return JSON.stringify([snapshot.value, c.lease, c.relays, c.mcsFrontends, c.registration?.frontends ?? null]);
      },
    });
  }

  /** The steps of a path after the actor's own start (paths begin with `xstate.init`). */
  const eventSteps = <P extends { steps: Array<{ event: { type: string } }> }>(path: P) =>
    path.steps.filter((step) => step.event.type !== 'xstate.init') as P['steps'];

  it.each(['mcs', 'registrations'] as const)('%s mode: each generated path replays to its end state', (mode) => {
    const paths = shortestPaths(mode);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      const actor = startPool({ mode });
      for (const step of eventSteps(path)) actor.send(step.event);
      expect(actor.getSnapshot().value).toBe(path.state.value);
      actor.stop();
    }
  });

  it('mcs mode reaches all five contract states and absent', () => {
    const reached = new Set(shortestPaths('mcs').map((p) => p.state.value));
    expect([...reached].sort()).toEqual(['absent', 'frontendless', 'lapsed', 'live', 'one-sided', 'unregistered']);
  });

  it('registrations mode reaches only live, frontendless and lapsed (absent at start)', () => {
    const paths = shortestPaths('registrations');
    const reached = new Set(paths.map((p) => p.state.value));
    expect([...reached].sort()).toEqual(['absent', 'frontendless', 'lapsed', 'live']);
    // `absent` only where an actor starts: the paths that end there carry only (ignored) MCS facts.
    const toAbsent = paths.filter((p) => p.state.value === 'absent').flatMap((p) => eventSteps(p));
    expect(toAbsent.length).toBeGreaterThan(0);
    expect(toAbsent.every((s) => s.event.type === 'SLICES')).toBe(true);
  });
});

// ── Seeded random walk ──────────────────────────────────────────────────────────────────────────────
function randomEvent(random: () => number, at: number): PoolEvent {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const some = (prefix: string) => Array.from({ length: pick([0, 0, 1, 2]) }, (_, i) => `http://${prefix}.${i}:80`);
  switch (pick(['upsert', 'lapse', 'slices'] as const)) {
    case 'upsert':
      return {
        type: 'LEASE_UPSERT',
        at,
        registration: registration({ frontends: some('10.0.0'), model: pick(['a', 'b']) }),
        deadlineMs: at + LEASE_MS,
      };
    case 'lapse':
      return { type: 'LEASE_LAPSED', at };
    case 'slices':
      return { type: 'SLICES', at, relays: some('10.1.0'), frontends: some('10.2.0'), frontendSlicesWithPort: random() < 0.5 };
  }
}

describe('pool chart: seeded random walk', () => {
  it.each([
    ['mcs', 1],
    ['mcs', 2],
    ['registrations', 3],
  ] as const)('%s mode (seed %i): the state is always the one the facts call for', (mode, seed) => {
    const random = seededRandom(seed);
    const clock = new SimulatedClock();
    const actor = startPool({ mode, clock, historyLimit: 10 });
    for (let i = 0; i < 4000; i += 1) {
      // Time passes too, so pending two-lease timers fire in between.
      clock.increment(Math.floor(random() * LEASE_MS));
      const before = actor.getSnapshot();
      const event = randomEvent(random, clock.now());
      actor.send(event);
      const after = actor.getSnapshot();
      const where = `step ${i}: ${before.value} --${JSON.stringify(event)}--> ${after.value}`;
      expect(after.value, where).toBe(classify(after.context));
      expect(after.context.state, where).toBe(after.value);
      if (after.value !== before.value) {
        expect(after.context.history.at(-1), where).toEqual({ at: event.at, event: event.type, from: before.value, to: after.value });
      }
      if (mode === 'registrations') expect(['absent', 'live', 'frontendless', 'lapsed']).toContain(after.value);
    }
  });
});

// ── Warnings on a simulated clock ───────────────────────────────────────────────────────────────────
describe('pool chart: warnings', () => {
  function warnedPool(mode: PoolMode) {
    const clock = new SimulatedClock();
    const warnStuck = vi.fn();
    const warnFrontendless = vi.fn();
    const machine = poolMachine.provide({ actions: { warnStuck, warnFrontendless } });
    const actor = startPool({ mode, clock, machine });
    const send = (name: EventName) => actor.send(stamped(name, clock.now()));
    const stuckStates = () => warnStuck.mock.calls.map((call) => (call[1] as { state: string }).state);
    return { clock, actor, send, warnStuck, warnFrontendless, stuckStates };
  }

  const STUCK: Array<{ state: 'unregistered' | 'one-sided' | 'lapsed'; enter: EventName[]; leave: EventName; again: EventName[] }> = [
    { state: 'unregistered', enter: ['SLICES_RF'], leave: 'SLICES_00', again: ['SLICES_RF'] },
    { state: 'one-sided', enter: ['UPSERT_F'], leave: 'SLICES_RF', again: ['SLICES_00'] },
    { state: 'lapsed', enter: ['SLICES_RF', 'UPSERT_F', 'LAPSE'], leave: 'UPSERT_F', again: ['LAPSE'] },
  ];

  it.each(STUCK)('mcs: $state warns once, exactly two leases after entry', ({ state, enter }) => {
    const pool = warnedPool('mcs');
    pool.clock.increment(5000);
    for (const name of enter) pool.send(name);
    expect(pool.actor.getSnapshot().value).toBe(state);
    const enteredAt = pool.clock.now();

    pool.clock.increment(2 * LEASE_MS - 1);
    expect(pool.warnStuck).not.toHaveBeenCalled();
    pool.clock.increment(1);
    expect(pool.stuckStates()).toEqual([state]);
    const { context } = pool.warnStuck.mock.calls[0]![0] as { context: { since: number; key: string } };
    expect(context.since).toBe(enteredAt);
    expect(context.key).toBe(KEY);

    pool.clock.increment(20 * LEASE_MS);
    expect(pool.warnStuck).toHaveBeenCalledTimes(1);
  });

  it.each(STUCK)('mcs: $state warns again after leaving and re-entering', ({ state, enter, leave, again }) => {
    const pool = warnedPool('mcs');
    for (const name of enter) pool.send(name);
    pool.clock.increment(2 * LEASE_MS);
    expect(pool.stuckStates()).toEqual([state]);

    pool.send(leave);
    expect(pool.actor.getSnapshot().value).not.toBe(state);
    for (const name of again) pool.send(name);
    expect(pool.actor.getSnapshot().value).toBe(state);
    pool.clock.increment(2 * LEASE_MS - 1);
    expect(pool.warnStuck).toHaveBeenCalledTimes(1);
    pool.clock.increment(1);
    expect(pool.stuckStates()).toEqual([state, state]);
  });

  it.each(STUCK)('mcs: $state left before two leases does not warn', ({ enter, leave }) => {
    const pool = warnedPool('mcs');
    for (const name of enter) pool.send(name);
    pool.clock.increment(2 * LEASE_MS - 1);
    pool.send(leave);
    pool.clock.increment(10 * LEASE_MS);
    expect(pool.warnStuck).not.toHaveBeenCalled();
  });

  it('events that keep the state do not restart the two-lease timer', () => {
    const pool = warnedPool('mcs');
    pool.send('SLICES_RF');
    pool.clock.increment(LEASE_MS);
    pool.send('SLICES_RF'); // identical
    pool.send('SLICES_R0'); // different facts, same state
    pool.clock.increment(LEASE_MS);
    expect(pool.stuckStates()).toEqual(['unregistered']);

    const oneSided = warnedPool('mcs');
    oneSided.send('UPSERT_F');
    for (let i = 0; i < 4; i += 1) {
      oneSided.clock.increment(LEASE_MS / 2);
      oneSided.send('UPSERT_F'); // renewals
    }
    expect(oneSided.stuckStates()).toEqual(['one-sided']);
  });

  it('registrations: a lapsed pool never warns as stuck (it simply left)', () => {
    const pool = warnedPool('registrations');
    pool.send('UPSERT_F');
    pool.send('LAPSE');
    expect(pool.actor.getSnapshot().value).toBe('lapsed');
    pool.clock.increment(50 * LEASE_MS);
    expect(pool.warnStuck).not.toHaveBeenCalled();
  });

  it('live and frontendless never warn as stuck', () => {
    const pool = warnedPool('mcs');
    pool.send('SLICES_RF');
    pool.send('UPSERT_F');
    pool.clock.increment(10 * LEASE_MS);
    pool.send('SLICES_R0');
    pool.clock.increment(10 * LEASE_MS);
    expect(pool.warnStuck).not.toHaveBeenCalled();
  });

  it.each(['mcs', 'registrations'] as const)('%s: frontendless warns once per entry', (mode) => {
    const pool = warnedPool(mode);
    const [noFrontend, withFrontend]: [EventName, EventName] = mode === 'mcs' ? ['SLICES_R0', 'SLICES_RF'] : ['UPSERT_0', 'UPSERT_F'];
    if (mode === 'mcs') pool.send('UPSERT_F');
    pool.send(noFrontend);
    expect(pool.actor.getSnapshot().value).toBe('frontendless');
    expect(pool.warnFrontendless).toHaveBeenCalledTimes(1);
    pool.send(noFrontend);
    pool.clock.increment(10 * LEASE_MS);
    expect(pool.warnFrontendless).toHaveBeenCalledTimes(1);

    pool.send(withFrontend);
    expect(pool.actor.getSnapshot().value).toBe('live');
    pool.send(noFrontend);
    expect(pool.warnFrontendless).toHaveBeenCalledTimes(2);
  });
});

// ── History ─────────────────────────────────────────────────────────────────────────────────────────
describe('pool chart: history', () => {
  it('records (at, event, from, to) in order', () => {
    const actor = startPool({ mode: 'mcs' });
    actor.send(stamped('SLICES_RF', 100));
    actor.send(stamped('SLICES_RF', 150)); // no transition, no entry
    actor.send(stamped('UPSERT_F', 200));
    actor.send(stamped('SLICES_R0', 300));
    actor.send(stamped('LAPSE', 400));
    actor.send(stamped('SLICES_00', 500));
    expect(actor.getSnapshot().context.history).toEqual([
      { at: 100, event: 'SLICES', from: 'absent', to: 'unregistered' },
      { at: 200, event: 'LEASE_UPSERT', from: 'unregistered', to: 'live' },
      { at: 300, event: 'SLICES', from: 'live', to: 'frontendless' },
      { at: 400, event: 'LEASE_LAPSED', from: 'frontendless', to: 'lapsed' },
      { at: 500, event: 'SLICES', from: 'lapsed', to: 'absent' },
    ]);
    expect(actor.getSnapshot().context.since).toBe(500);
  });

  it('keeps at most historyLimit entries, dropping the oldest', () => {
    const actor = startPool({ mode: 'registrations', historyLimit: 3 });
    const names: EventName[] = ['UPSERT_F', 'UPSERT_0', 'UPSERT_F', 'LAPSE', 'UPSERT_0', 'UPSERT_F'];
    names.forEach((name, i) => actor.send(stamped(name, (i + 1) * 10)));
    expect(actor.getSnapshot().context.history).toEqual([
      { at: 40, event: 'LEASE_LAPSED', from: 'live', to: 'lapsed' },
      { at: 50, event: 'LEASE_UPSERT', from: 'lapsed', to: 'frontendless' },
      { at: 60, event: 'LEASE_UPSERT', from: 'frontendless', to: 'live' },
    ]);
  });

  it('defaults to a limit that still holds a long history', () => {
    const actor = startPool({ mode: 'registrations' });
    for (let i = 0; i < 200; i += 1) actor.send(stamped(i % 2 === 0 ? 'UPSERT_F' : 'UPSERT_0', i));
    const { history } = actor.getSnapshot().context;
    expect(history.length).toBeGreaterThan(10);
    expect(history.length).toBeLessThan(200);
    expect(history.at(-1)).toMatchObject({ at: 199, to: 'frontendless' });
  });
});
