// The facts a pool event carried, in words, for the /debug timeline's "cause" column. Lease events name
// their region when regions are configured (docs/contract.md §7).
import type { AnyEventObject } from 'xstate';
import type { PoolEvent } from '../../machines/pool.machine.js';

export function describeEvent(event: AnyEventObject): string {
  const pool = event as PoolEvent;
  switch (pool.type) {
    case 'LEASE_UPSERT':
      return `${storeOf(pool.region)} logged a new or changed registration (model ${pool.registration.model}); lease until ${new Date(pool.deadlineMs).toISOString()}`;
    case 'LEASE_LAPSED':
      return `${storeOf(pool.region)} logged a lapse: no heartbeat within the lease, on the store's clock`;
    case 'REGION_DROPPED':
      return `region ${pool.region} could not be read for longer than the hold: its lease counts as gone here until it is read again`;
    case 'SLICES':
      return `EndpointSlices now show ${count(pool.relays.length, 'Ready PoolRelay endpoint')} and ${count(pool.frontends.length, 'Ready frontend')}${pool.frontendSlicesWithPort ? '' : ' (no frontend slice with the named port)'}`;
    default:
      return event.type;
  }
}

/** `the store`, or `region eu-west-1's store`. */
function storeOf(region: string | undefined): string {
  return region ? `region ${region}'s store` : 'the store';
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
