// The pool state chart (docs/contract.md §3): one pool machine per pool key, on every replica.
//
// Pure data. Events carry facts from the two sides (the lease from the store, the slices from
// Kubernetes); root-level handlers record the facts in context, and each state's eventless (`always`)
// transitions move to the state the facts now call for. A state is therefore never re-entered when an
// event changes nothing about it, so the two-lease warning is timed from the entry into the condition.
// Warnings are named actions without an effect here: the join provides them (`machine.provide`).
//
//   absent ─▶ unregistered ─▶ live ◀─▶ frontendless      (each of the two listed states:
//     │  ╲                      ▲   ╲      ▲                ─▶ one-sided when MCS drops the relay,
//     │   ╲───────────────────▶ │    ╲──▶ lapsed ──▶ absent  ─▶ lapsed when the lease lapses)
//     └─▶ one-sided ────────────┘
//
// The lease side is kept per region (docs/contract.md §7; one region named '' without regions): it is live
// while any region holds a live lease, and the registration shown is the one whose content changed last
// (ties: the region name that sorts first), so every replica shows the same one. A region that this
// replica stopped reading for longer than the hold is dropped like a lapse of that region's lease.
//
// `absent` is not one of the contract's five states: it is where an actor starts, and where it goes
// when neither side lists the pool any more (MCS modes). In `registrations` mode a lapsed pool stays
// `lapsed`, the only way it leaves. Either way the join keeps a left pool for /debug for a while.
import { assign, setup } from 'xstate';
import type { PoolKey, PoolState, Registration } from '../src/contract/index.js';

export type PoolMode = 'registrations' | 'mcs';

/** One transition, for /debug. `at` is the replica's wall clock (ms) when the causing event arrived. */
export interface PoolTransition {
  at: number;
  event: string;
  from: PoolState;
  to: PoolState;
}

/** One region's live lease of the pool. Times are on that region's store clock (ms). */
export interface RegionLease {
  registration: Registration;
  /**
   * The registration's version: it grows with each content change, and a change written in one region
   * takes a version above every other region's lease of the pool that its writer knew (docs/contract.md
   * §7), so versions order the changes across regions without comparing their clocks.
   */
  version: number;
  /** When the registration's content last changed (the `renewed_at_ms` of its last logged upsert); shown, never compared. */
  changedAtMs: number;
  deadlineMs: number;
  /**
   * This replica's receipt order of the lease's last upsert from its region (a counter per region's feed):
   * a due read of the region sent after it reflects it, one sent before may not (join.ts, applyDueLapses).
   */
  receipt: number;
}

/** The region of a store event without regions configured. */
export const NO_REGION = '';

export interface PoolContext {
  key: PoolKey;
  mode: PoolMode;
  /** The configured lease, for the two-lease warning delay. */
  leaseMs: number;
  historyLimit: number;
  /** The lease side: never seen, live, or lapsed (forgotten again once the pool is absent). */
  lease: 'none' | 'live' | 'lapsed';
  /** Live leases by region: `lease` is live exactly while this holds one. */
  leases: Record<string, RegionLease>;
  /** The registration shown (see `chooseLease`); the last one seen once every lease lapsed. */
  registration: Registration | null;
  /** The latest deadline of the live leases, as of their last logged change (store clocks). */
  leaseDeadlineMs: number | null;
  /** MCS side: Ready PoolRelay endpoints, and frontends from `<name>-frontend` slices. */
  relays: string[];
  mcsFrontends: string[];
  frontendSlicesWithPort: boolean;
  /** The current state (mirrors the snapshot's value, so entry actions know where they came from). */
  state: PoolState;
  /** When the current state was entered (wall clock ms). */
  since: number;
  history: PoolTransition[];
}

export type PoolEvent =
  /** A region's store logged a new or changed registration (or a snapshot holds it). `region` defaults to
   * NO_REGION; `version`, `changedAtMs` and `receipt` to 0 (only compared between regions, or by the join). */
  | {
      type: 'LEASE_UPSERT';
      at: number;
      registration: Registration;
      deadlineMs: number;
      region?: string;
      version?: number;
      changedAtMs?: number;
      receipt?: number;
    }
  /** A region's lease lapsed (logged by its sweeper, or its deadline seen passed on its store's clock). */
  | { type: 'LEASE_LAPSED'; at: number; region?: string }
  /** This replica could not read the region for longer than the hold: its lease counts as gone. */
  | { type: 'REGION_DROPPED'; at: number; region: string }
  /** The MCS side of the pool in one event (relays and frontends change together on a relist, and a
   * pool must not pass through `frontendless` on its way out). Empty lists: MCS lists nothing for it. */
  | { type: 'SLICES'; at: number; relays: string[]; frontends: string[]; frontendSlicesWithPort: boolean };

export interface PoolInput {
  key: PoolKey;
  mode: PoolMode;
  leaseMs: number;
  /** Wall clock ms of creation. */
  at: number;
  historyLimit?: number;
}

export const DEFAULT_HISTORY_LIMIT = 50;

/** The frontends a listed pool offers: from the registration in `registrations` mode, from MCS otherwise. */
export function frontendsOf(context: PoolContext): string[] {
  if (context.mode === 'registrations') return context.registration?.frontends ?? [];
  return context.mcsFrontends;
}

/**
 * The lease whose registration is shown: the highest version (the latest content change, in the order the
 * writers saw the changes), ties to the region name that sorts first (docs/contract.md §7), so that every
 * replica picks the same one. Never the regions' clocks: two Redis clocks are not comparable.
 */
export function chooseLease(leases: Record<string, RegionLease>): RegionLease | undefined {
  let chosen: { region: string; lease: RegionLease } | undefined;
  for (const [region, lease] of Object.entries(leases)) {
    if (!chosen || lease.version > chosen.lease.version || (lease.version === chosen.lease.version && region < chosen.region)) {
      chosen = { region, lease };
    }
  }
  return chosen?.lease;
}

/** The lease side's facts once `leases` changed: live while any region holds a lease. */
function leaseFacts(leases: Record<string, RegionLease>, previous: Registration | null): Partial<PoolContext> {
  const chosen = chooseLease(leases);
  if (!chosen) return { leases, lease: 'lapsed', registration: previous, leaseDeadlineMs: null };
  const deadline = Math.max(...Object.values(leases).map((l) => l.deadlineMs));
  return { leases, lease: 'live', registration: chosen.registration, leaseDeadlineMs: deadline };
}

/** A pool's context before any event (the machine's `context`). */
export function initialContext(input: PoolInput): PoolContext {
  return {
    key: input.key,
    mode: input.mode,
    leaseMs: input.leaseMs,
    historyLimit: input.historyLimit ?? DEFAULT_HISTORY_LIMIT,
    lease: 'none',
    leases: {},
    registration: null,
    leaseDeadlineMs: null,
    relays: [],
    mcsFrontends: [],
    frontendSlicesWithPort: false,
    state: 'absent',
    since: input.at,
    history: [],
  };
}

/** What `recordLease` assigns: the region's lease recorded, the lease side's facts updated. */
export function leaseUpserted(context: PoolContext, event: Extract<PoolEvent, { type: 'LEASE_UPSERT' }>): Partial<PoolContext> {
  const lease: RegionLease = {
    registration: event.registration,
    version: event.version ?? 0,
    changedAtMs: event.changedAtMs ?? 0,
    deadlineMs: event.deadlineMs,
    receipt: event.receipt ?? 0,
  };
  return leaseFacts({ ...context.leases, [event.region ?? NO_REGION]: lease }, context.registration);
}

/** What `recordTransition` assigns on entering `to`: (time, event, from, to) appended to the bounded history. */
export function entered(context: PoolContext, event: { type: string }, to: PoolState): Partial<PoolContext> {
  if (context.state === to) return {};
  const at = 'at' in event && typeof event.at === 'number' ? event.at : context.since;
  const entry: PoolTransition = { at, event: event.type, from: context.state, to };
  // concat, not a spread: a spread's array is grown as by push, 17 slots for one entry, and every pool
  // keeps its history (docs/design.md "Memory per pool"); concat allocates the entries it holds.
  const history = context.history.concat([entry]);
  if (history.length > context.historyLimit) history.splice(0, history.length - context.historyLimit);
  return { state: to, since: at, history };
}

/**
 * The highest version of the live leases (0 when none): a home writer's change of the pool's content
 * takes a version above it (docs/contract.md §7), so it is shown over every lease this replica knew.
 */
export function highestVersion(context: PoolContext): number {
  let highest = 0;
  for (const lease of Object.values(context.leases)) if (lease.version > highest) highest = lease.version;
  return highest;
}

/** The regions holding a live lease, sorted (a listed pool's `lease_regions`). */
export function leaseRegions(context: PoolContext): string[] {
  return Object.keys(context.leases).sort();
}

/** The state the facts call for. Every guard below is one comparison with it. */
export function classify(context: PoolContext): PoolState {
  const leaseLive = context.lease === 'live';
  const served = frontendsOf(context).length > 0 ? 'live' : 'frontendless';
  if (context.mode === 'registrations') {
    if (leaseLive) return served;
    return context.lease === 'lapsed' ? 'lapsed' : 'absent';
  }
  const relayReady = context.relays.length > 0;
  if (leaseLive) return relayReady ? served : 'one-sided';
  if (relayReady) return context.lease === 'lapsed' ? 'lapsed' : 'unregistered';
  return 'absent';
}

const is =
  (state: PoolState) =>
  ({ context }: { context: PoolContext }): boolean =>
    classify(context) === state;

export const poolMachine = setup({
  types: {
    context: {} as PoolContext,
    events: {} as PoolEvent,
    input: {} as PoolInput,
  },
  guards: {
    isUnregistered: is('unregistered'),
    isOneSided: is('one-sided'),
    isLive: is('live'),
    isFrontendless: is('frontendless'),
    isLapsed: is('lapsed'),
    isAbsent: is('absent'),
    /** A lapsed pool is worth a warning only where MCS still lists it; in `registrations` mode it simply left. */
    listedByMcs: ({ context }) => context.mode === 'mcs',
  },
  delays: {
    /** Two lease durations: how long a pool may stay unlisted while one side lists it before a warning. */
    twoLeases: ({ context }) => 2 * context.leaseMs,
  },
  actions: {
    recordLease: assign(({ context, event }) => (event.type === 'LEASE_UPSERT' ? leaseUpserted(context, event) : {})),
    /** A lapse (or a drop) of one region's lease; the lease side lapses when no region holds one. */
    recordLapse: assign(({ context, event }) => {
      if (event.type !== 'LEASE_LAPSED' && event.type !== 'REGION_DROPPED') return {};
      // Stryker disable next-line LogicalOperator: not equivalent, but StrykerJS 9.6 places a mutant in a pattern's computed key by moving the whole `const` into a block, which breaks the unmutated code too; the default region is covered by every lapse test without regions
      const { [event.region ?? NO_REGION]: _gone, ...leases } = context.leases;
      return leaseFacts(leases, context.registration);
    }),
    recordSlices: assign(({ event }) =>
      event.type === 'SLICES'
        ? { relays: event.relays, mcsFrontends: event.frontends, frontendSlicesWithPort: event.frontendSlicesWithPort }
        : {},
    ),
    /** Entry of every state: append (time, event, from, to) to the bounded history. */
    recordTransition: assign(({ context, event }, params: { to: PoolState }) => entered(context, event, params.to)),
    /** A pool that left (MCS modes) forgets its lapsed lease: a Ready relay seen later is `unregistered`. */
    forgetLapsedLease: assign(({ context }) =>
      context.mode === 'mcs' && context.lease === 'lapsed' ? { lease: 'none' as const } : {},
    ),
    // Effects, provided by the join: the warnings of docs/contract.md §3.
    warnStuck: (_args, _params: { state: 'unregistered' | 'one-sided' | 'lapsed' }) => {},
    warnFrontendless: () => {},
  },
}).createMachine({
  id: 'pool',
  context: ({ input }) => initialContext(input),
  initial: 'absent',
  on: {
    LEASE_UPSERT: { actions: 'recordLease' },
    LEASE_LAPSED: { actions: 'recordLapse' },
    REGION_DROPPED: { actions: 'recordLapse' },
    SLICES: { actions: 'recordSlices' },
  },
  states: {
    absent: {
      entry: [{ type: 'recordTransition', params: { to: 'absent' } }, 'forgetLapsedLease'],
      // A lapse that arrives while MCS lists nothing is forgotten at once, as on entry (MCS modes).
      on: {
        LEASE_LAPSED: { actions: ['recordLapse', 'forgetLapsedLease'] },
        REGION_DROPPED: { actions: ['recordLapse', 'forgetLapsedLease'] },
      },
      always: [
        { guard: 'isUnregistered', target: 'unregistered' },
        { guard: 'isOneSided', target: 'one-sided' },
        { guard: 'isLive', target: 'live' },
        { guard: 'isFrontendless', target: 'frontendless' },
        // registrations mode: the lease alone decides, also for a lapse of a lease this replica never saw live.
        { guard: 'isLapsed', target: 'lapsed' },
      ],
    },
    unregistered: {
      entry: { type: 'recordTransition', params: { to: 'unregistered' } },
      after: { twoLeases: { actions: { type: 'warnStuck', params: { state: 'unregistered' } } } },
      always: [
        { guard: 'isLive', target: 'live' },
        { guard: 'isFrontendless', target: 'frontendless' },
        { guard: 'isAbsent', target: 'absent' },
        // The store logs a lapse of a lease this replica never saw live, while MCS shows the relay.
        { guard: 'isLapsed', target: 'lapsed' },
      ],
    },
    'one-sided': {
      entry: { type: 'recordTransition', params: { to: 'one-sided' } },
      after: { twoLeases: { actions: { type: 'warnStuck', params: { state: 'one-sided' } } } },
      always: [
        { guard: 'isLive', target: 'live' },
        { guard: 'isFrontendless', target: 'frontendless' },
        { guard: 'isAbsent', target: 'absent' },
      ],
    },
    live: {
      entry: { type: 'recordTransition', params: { to: 'live' } },
      always: [
        { guard: 'isFrontendless', target: 'frontendless' },
        { guard: 'isOneSided', target: 'one-sided' },
        { guard: 'isLapsed', target: 'lapsed' },
      ],
    },
    frontendless: {
      entry: [{ type: 'recordTransition', params: { to: 'frontendless' } }, 'warnFrontendless'],
      always: [
        { guard: 'isLive', target: 'live' },
        { guard: 'isOneSided', target: 'one-sided' },
        { guard: 'isLapsed', target: 'lapsed' },
      ],
    },
    lapsed: {
      entry: { type: 'recordTransition', params: { to: 'lapsed' } },
      after: {
        twoLeases: { guard: 'listedByMcs', actions: { type: 'warnStuck', params: { state: 'lapsed' } } },
      },
      always: [
        { guard: 'isLive', target: 'live' },
        { guard: 'isFrontendless', target: 'frontendless' },
        { guard: 'isAbsent', target: 'absent' },
      ],
    },
  },
});

export type PoolMachine = typeof poolMachine;
