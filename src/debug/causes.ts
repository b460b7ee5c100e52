// The facts a pool event carried, in words, for the /debug timeline's "cause" column.
import type { AnyEventObject } from 'xstate';
import type { PoolEvent } from '../../machines/pool.machine.js';

export function describeEvent(event: AnyEventObject): string {
  const pool = event as PoolEvent;
  switch (pool.type) {
    case 'LEASE_UPSERT':
      return `the store logged a new or changed registration (model ${pool.registration.model}); lease until ${new Date(pool.deadlineMs).toISOString()}`;
    case 'LEASE_LAPSED':
      return 'the store logged a lapse: no heartbeat within the lease, on the store\'s clock';
    case 'SLICES':
      return `EndpointSlices now show ${count(pool.relays.length, 'Ready PoolRelay endpoint')} and ${count(pool.frontends.length, 'Ready frontend')}${pool.frontendSlicesWithPort ? '' : ' (no frontend slice with the named port)'}`;
    default:
      return event.type;
  }
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
