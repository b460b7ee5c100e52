// Zod schemas of the /debug JSON bodies, for the OpenAPI description. The bodies themselves are typed
// by interfaces (src/http/debug.ts, src/debug/types.ts); the checks at the end make `tsc` fail when a
// schema and its interface disagree, so the description cannot drift from what the routes return.
import { z } from 'zod';
import { POOL_STATES, regionStatusSchema } from '../contract/index.js';
import { registrationSchema } from '../contract/registration.js';
import type { DebugLease, DebugPool, DebugPoolList } from '../debug/describe.js';
import {
  OVERVIEW_STATES,
  type DebugPoolDetail,
  type DebugPoolSummary,
  type DebugRegion,
  type DebugStreamEvents,
  type FleetOverview,
  type MachineGraph,
} from '../debug/types.js';

const poolState = z.enum(POOL_STATES);

const historyEntry = z.object({
  at: z.string().meta({ description: 'ISO-8601, this replica\'s clock' }),
  event: z.string(),
  from: poolState,
  to: poolState,
});

export const debugLeaseSchema = z
  .object({
    region: z.string().meta({ description: "the region whose store holds the lease ('' without regions)" }),
    deadline_ms: z.number().int().meta({ description: "the deadline as last logged (that region's store clock, ms)" }),
    version: z.number().int().meta({ description: "the registration's version there: the highest is shown" }),
    changed_at_ms: z.number().int().meta({ description: "when the registration's content last changed there (that store's clock, ms; never compared across regions)" }),
    shown: z.boolean().meta({ description: 'its registration is the one shown: the highest version, ties to the first region name' }),
  })
  .meta({ description: 'One live lease of the pool (docs/contract.md §7).' });

export const debugPoolSchema = z.object({
  pool: z.string().meta({ description: 'cluster_id/namespace/name' }),
  state: poolState,
  since: z.string(),
  lease: z.enum(['none', 'live', 'lapsed']),
  lease_deadline_ms: z.number().int().nullable().meta({ description: 'the deadline the store last logged (store clock, ms)' }),
  leases: z.array(debugLeaseSchema).meta({ description: 'every live lease, sorted by region' }),
  registration: registrationSchema.nullable(),
  relays: z.array(z.string()),
  frontends: z.array(z.string()),
  frontend_slices_with_port: z.boolean().nullable(),
  history: z.array(historyEntry),
});

export const debugPoolListSchema = z.object({
  complete: z.boolean(),
  reasons: z.array(z.string()),
  regions: z
    .array(regionStatusSchema)
    .optional()
    .meta({ description: 'with regions configured only: the regions entries of GET /pools (docs/contract.md §7)' }),
  pools: z.array(debugPoolSchema),
});

const transitionCause = z.object({
  transition: z.string().nullable(),
  guard: z.string().nullable(),
  detail: z.string(),
});

export const debugPoolDetailSchema = debugPoolSchema.extend({
  listed: z.boolean(),
  since_ms: z.number(),
  lease_ms: z.number(),
  lease_deadline_estimate_ms: z.number().nullable(),
  last_heartbeat_here_ms: z.number().nullable(),
  history: z.array(historyEntry.extend({ cause: transitionCause })),
});

export const debugPoolSummarySchema = z.object({
  pool: z.string(),
  state: z.string(),
  since_ms: z.number(),
  listed: z.boolean(),
  model: z.string().nullable(),
  lease_regions: z.array(z.string()),
});

/** A region as the /debug page's strip shows it (the `regions` events of GET /debug/pools/watch). */
export const debugRegionSchema = z.object({
  name: z.string(),
  home: z.boolean(),
  status: z.enum(['starting', 'reading', 'refilling', 'unreachable', 'dropped']),
  reason: z.string().nullable(),
  unreachable_since_ms: z.number().nullable(),
  refill_until_ms: z.number().nullable(),
  last_outage_ended_ms: z.number().nullable(),
  renewal_window_open: z.boolean(),
});

const overviewRow = z.object({
  region: z.string().nullable().meta({ description: 'null: pools holding no live lease' }),
  // One key per state (a record keyed by an enum says the same, in a form linters misread).
  counts: z.object(Object.fromEntries(OVERVIEW_STATES.map((state) => [state, z.number()])) as Record<(typeof OVERVIEW_STATES)[number], z.ZodNumber>),
  total: z.number(),
});

/** The fleet overview of the /debug page (the `overview` events of GET /debug/pools/watch). */
export const fleetOverviewSchema = z.object({
  by_region: z.array(overviewRow),
  by_model: z.array(z.object({ model: z.string().nullable(), rows: z.array(overviewRow) })),
});

export const machineGraphSchema = z.object({
  id: z.string(),
  initial: z.string(),
  states: z.array(z.object({ id: z.string(), key: z.string(), entry: z.array(z.string()) })),
  transitions: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(['event', 'always', 'after']),
      source: z.string(),
      target: z.string().nullable(),
      event: z.string(),
      label: z.string(),
      guard: z.string().nullable(),
      delay: z.string().nullable(),
      actions: z.array(z.string()),
    }),
  ),
});

const completeness = z.object({ complete: z.boolean(), reasons: z.array(z.string()) });

/** The events of GET /debug/pools/watch (`event:` the key, `data:` the value). */
export const debugStreamEventSchemas = {
  snapshot: completeness.extend({
    now_ms: z.number(),
    pools: z.array(debugPoolSummarySchema),
    selected: debugPoolDetailSchema.nullable(),
    regions: z.array(debugRegionSchema).nullable(),
    overview: fleetOverviewSchema,
  }),
  pools: z.object({ now_ms: z.number(), upserted: z.array(debugPoolSummarySchema), removed: z.array(z.string()) }),
  pool: z.object({ now_ms: z.number(), pool: debugPoolDetailSchema.nullable() }),
  completeness,
  regions: z.object({ now_ms: z.number(), regions: z.array(debugRegionSchema) }),
  overview: z.object({ now_ms: z.number(), overview: fleetOverviewSchema }),
};

type StreamSchemasAgree = { [K in keyof DebugStreamEvents]: Same<z.output<(typeof debugStreamEventSchemas)[K]>, DebugStreamEvents[K]> };

// Compile-time agreement of each schema with the interface the route returns (types only: nothing runs).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
export type SchemasAgreeWithRoutes = [
  Expect<Same<z.output<typeof debugLeaseSchema>, DebugLease>>,
  Expect<Same<z.output<typeof debugPoolSchema>, DebugPool>>,
  Expect<Same<z.output<typeof debugPoolListSchema>, DebugPoolList>>,
  Expect<Same<z.output<typeof debugRegionSchema>, DebugRegion>>,
  Expect<Same<z.output<typeof fleetOverviewSchema>, FleetOverview>>,
  Expect<Same<z.output<typeof debugPoolDetailSchema>, DebugPoolDetail>>,
  Expect<Same<z.output<typeof debugPoolSummarySchema>, DebugPoolSummary>>,
  Expect<Same<z.output<typeof machineGraphSchema>, MachineGraph>>,
  Expect<StreamSchemasAgree[keyof DebugStreamEvents]>,
];
