// The routers' join on its own, shared by its test files (router-join.test.ts, router-join-regions.test.ts):
// memory stores behind DelegatingStore, which a test cuts off or replaces, and joins over them; no socket,
// no service.
import type { RouterRegistration, RouterWatchEvent } from '../../src/contract/index.js';
import { RouterJoin, type RouterJoinOptions } from '../../src/join/router-join.js';
import { createMemoryRouterStore } from '../../src/store/memory.js';
import type { RegistrationStore } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { silentLogger } from '../support/logs.js';

export const LONG_LEASE_MS = 60_000;
// Long enough that a loaded machine still sees the hold before the drop.
export const HOLD_MS = 400;

const running: RouterJoin[] = [];
const stores: RegistrationStore<RouterRegistration>[] = [];
/** A store the test made itself, closed after the test as the helpers' own are. */
export function closedAfterTest<S extends RegistrationStore<RouterRegistration>>(store: S): S {
  stores.push(store);
  return store;
}

/** Stops every join and closes every store the helpers here made: each test file's afterEach. */
export async function stopAll(): Promise<void> {
  for (const join of running.splice(0)) await join.stop();
  for (const store of stores.splice(0)) await store.close();
}

/** A router store that does not forget on restart (as Redis), on its own clock when `now` is given. */
export function durableStore(options: { leaseMs?: number; now?: () => number } = {}) {
  const store = new DelegatingStore<RouterRegistration>(createMemoryRouterStore({ leaseMs: options.leaseMs ?? LONG_LEASE_MS, now: options.now }), {
    forgetsOnRestart: false,
  });
  stores.push(store);
  return store;
}

export function startJoin(options: Partial<RouterJoinOptions> & { store: RegistrationStore<RouterRegistration> }, start = true) {
  const join = new RouterJoin({
    leaseMs: LONG_LEASE_MS,
    logger: silentLogger(),
    sweepIntervalMs: 20,
    dueGraceMs: 20,
    storeBackoff: { initialMs: 20, maxMs: 40 },
    ...options,
  });
  running.push(join);
  const events: RouterWatchEvent[] = [];
  join.view.subscribe((event) => events.push(structuredClone(event)));
  if (start) join.start();
  return { join, events };
}

/** Two regions: r1 (home) and r2 (followed), each its own store. */
export function twoRegions(
  options: { now1?: () => number; now2?: () => number; followedName?: string; logger?: RouterJoinOptions['logger']; leaseMs?: number } = {},
) {
  const r1 = durableStore({ now: options.now1 });
  const r2 = durableStore({ now: options.now2 });
  const followed = options.followedName ?? 'r2';
  const { join, events } = startJoin({
    store: r1,
    regions: { home: 'r1', followed: [{ name: followed, store: r2 }], holdMs: HOLD_MS },
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  return { join, events, r1, r2 };
}

export const router = (id: string, more: Partial<RouterRegistration> = {}): RouterRegistration => ({ id, url: `http://10.0.1.9:9100/${id}`, ...more });
export const routersOf = (join: RouterJoin) => join.view.list().routers;
