// Representative facts for the pool chart: one event of each kind the chart tells apart (a lease with and
// without frontends, a lapse, slices with and without relays and frontends), for the registration tests send.
import { poolKey } from '../../src/contract/index.js';
import type { PoolEvent } from '../../machines/pool.machine.js';
import { REGISTRATION, registration } from '../support/registration.js';

export const KEY = poolKey(REGISTRATION);
export const LEASE_MS = 1000;

export const MCS_RELAY = 'http://10.1.0.9:9000';
export const MCS_FRONTEND = 'http://10.1.0.7:8000';

/** The event kinds of the transition table, without `at` (stamped when sent). */
export type EventName = 'UPSERT_F' | 'UPSERT_0' | 'LAPSE' | 'SLICES_RF' | 'SLICES_R0' | 'SLICES_00' | 'SLICES_0F';
export const EVENT_NAMES: readonly EventName[] = ['UPSERT_F', 'UPSERT_0', 'LAPSE', 'SLICES_RF', 'SLICES_R0', 'SLICES_00', 'SLICES_0F'];

type Unstamped = PoolEvent extends infer E ? (E extends unknown ? Omit<E, 'at'> : never) : never;

export const EVENTS: Record<EventName, Unstamped> = {
  /** A lease whose registration lists a frontend. */
  UPSERT_F: { type: 'LEASE_UPSERT', registration: registration(), deadlineMs: 10_000 },
  /** A lease whose registration lists none. */
  UPSERT_0: { type: 'LEASE_UPSERT', registration: registration({ frontends: [] }), deadlineMs: 10_000 },
  LAPSE: { type: 'LEASE_LAPSED' },
  /** MCS: a Ready PoolRelay and a Ready frontend. */
  SLICES_RF: { type: 'SLICES', relays: [MCS_RELAY], frontends: [MCS_FRONTEND], frontendSlicesWithPort: true },
  /** MCS: a Ready PoolRelay, no frontend slice with the port. */
  SLICES_R0: { type: 'SLICES', relays: [MCS_RELAY], frontends: [], frontendSlicesWithPort: false },
  /** MCS lists nothing for the pool. */
  SLICES_00: { type: 'SLICES', relays: [], frontends: [], frontendSlicesWithPort: false },
  /** MCS: frontends only (a frontend-only pool, never listed). */
  SLICES_0F: { type: 'SLICES', relays: [], frontends: [MCS_FRONTEND], frontendSlicesWithPort: true },
};

export function stamped(name: EventName, at: number): PoolEvent {
  return { ...EVENTS[name], at } as PoolEvent;
}
