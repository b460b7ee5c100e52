// Zod schemas of the /debug JSON bodies, for the OpenAPI description. The bodies themselves are typed
// by interfaces (src/http/debug.ts, src/debug/types.ts); the checks at the end make `tsc` fail when a
// schema and its interface disagree, so the description cannot drift from what the routes return.
import { z } from 'zod';
import { POOL_STATES } from '../contract/index.js';
import { registrationSchema } from '../contract/registration.js';
import type { DebugPool } from '../debug/describe.js';
import type { DebugPoolDetail, DebugPoolSummary, MachineGraph } from '../debug/types.js';

const poolState = z.enum(POOL_STATES);

const historyEntry = z.object({
  at: z.string().meta({ description: 'ISO-8601, this replica\'s clock' }),
  event: z.string(),
  from: poolState,
  to: poolState,
});

export const debugPoolSchema = z.object({
  pool: z.string().meta({ description: 'cluster_id/namespace/name' }),
  state: poolState,
  since: z.string(),
  lease: z.enum(['none', 'live', 'lapsed']),
  lease_deadline_ms: z.number().nullable().meta({ description: 'the deadline the store last logged (store clock, ms)' }),
  registration: registrationSchema.nullable(),
  relays: z.array(z.string()),
  frontends: z.array(z.string()),
  frontend_slices_with_port: z.boolean().nullable(),
  history: z.array(historyEntry),
});

export const debugPoolListSchema = z.object({
  complete: z.boolean(),
  reasons: z.array(z.string()),
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

// Compile-time agreement of each schema with the interface the route returns (types only: nothing runs).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
export type SchemasAgreeWithRoutes = [
  Expect<Same<z.output<typeof debugPoolSchema>, DebugPool>>,
  Expect<Same<z.output<typeof debugPoolDetailSchema>, DebugPoolDetail>>,
  Expect<Same<z.output<typeof debugPoolSummarySchema>, DebugPoolSummary>>,
  Expect<Same<z.output<typeof machineGraphSchema>, MachineGraph>>,
];
