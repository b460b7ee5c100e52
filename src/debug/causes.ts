// The facts a pool event carried, in words, for the /debug timeline's "cause" column. Lease events name
// their region when regions are configured (docs/contract.md §7).
//
// The inspector keeps a cause for each of the last 50 transitions of every pool (docs/contract.md §3), so
// what it keeps is the few facts the words need (`eventFacts`), in one flat object, and the words are
// written only when /debug asks (`describeFacts`): a sentence per entry, built at once, cost about as much
// again as the history entry itself, for every pool, whether anyone ever opened the page or not.
import type { AnyEventObject, AnyTransitionDefinition } from 'xstate';
import type { PoolEvent } from '../../machines/pool.machine.js';

/** A transition's cause as kept: the chart's transition taken (shared by every pool of the machine, so
 * free to hold; its id and guard are read when asked), and what `describeFacts` needs of the event. Every
 * field is present, so every kept cause has one object shape. */
export interface EventFacts {
  taken: AnyTransitionDefinition | null;
  type: string;
  region: string | undefined;
  model: string | undefined;
  deadlineMs: number | undefined;
  relays: number | undefined;
  frontends: number | undefined;
  frontendSlicesWithPort: boolean | undefined;
}

export function eventFacts(event: AnyEventObject, taken: AnyTransitionDefinition | null): EventFacts {
  const pool = event as PoolEvent;
  const lease = pool.type === 'LEASE_UPSERT' ? pool : undefined;
  const slices = pool.type === 'SLICES' ? pool : undefined;
  return {
    taken,
    type: event.type,
    region: pool.type === 'LEASE_UPSERT' || pool.type === 'LEASE_LAPSED' || pool.type === 'REGION_DROPPED' ? pool.region : undefined,
    model: lease?.registration.model,
    deadlineMs: lease?.deadlineMs,
    relays: slices?.relays.length,
    frontends: slices?.frontends.length,
    frontendSlicesWithPort: slices?.frontendSlicesWithPort,
  };
}

export function describeFacts(facts: EventFacts): string {
  switch (facts.type) {
    case 'LEASE_UPSERT':
      return `${storeOf(facts.region)} logged a new or changed registration (model ${facts.model}); lease until ${new Date(facts.deadlineMs!).toISOString()}`;
    case 'LEASE_LAPSED':
      return `${storeOf(facts.region)} logged a lapse: no heartbeat within the lease, on the store's clock`;
    case 'REGION_DROPPED':
      return `region ${facts.region} could not be read for longer than the hold: its lease counts as gone here until it is read again`;
    case 'SLICES':
      return `EndpointSlices now show ${count(facts.relays!, 'Ready PoolRelay endpoint')} and ${count(facts.frontends!, 'Ready frontend')}${facts.frontendSlicesWithPort ? '' : ' (no frontend slice with the named port)'}`;
    default:
      return facts.type;
  }
}

/** `the store`, or `region eu-west-1's store`. */
function storeOf(region: string | undefined): string {
  return region ? `region ${region}'s store` : 'the store';
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
