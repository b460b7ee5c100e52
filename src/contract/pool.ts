// What routers read: the listed pool, the pool list and the watch events (docs/contract.md §5).
import { z } from 'zod';
import { capacityItem, location } from './registration.js';

/** The five states of docs/contract.md §3, plus `absent`: neither side lists the pool (before it is first
 * seen in full, and after it left); an `absent` pool is kept for /debug only. */
export const POOL_STATES = ['unregistered', 'one-sided', 'live', 'frontendless', 'lapsed', 'absent'] as const;
export type PoolState = (typeof POOL_STATES)[number];

/** How pools are discovered (docs/contract.md §2): leases alone, or leases joined with Kubernetes MCS. */
export const POOL_DISCOVERIES = ['registrations', 'mcs', 'karmada'] as const;
export type PoolDiscovery = (typeof POOL_DISCOVERIES)[number];

/** Only these are listed by GET /pools. */
export const LISTED_STATES = ['live', 'frontendless'] as const satisfies readonly PoolState[];
export type ListedState = (typeof LISTED_STATES)[number];

export const poolIdSchema = z.object({
  cluster_id: z.string(),
  namespace: z.string(),
  name: z.string(),
});

export const listedPoolSchema = z.object({
  cluster_id: z.string(),
  namespace: z.string(),
  name: z.string(),
  model: z.string(),
  capabilities: z.array(z.string()),
  capacity: z.array(capacityItem),
  location,
  relays: z.array(z.string()),
  frontends: z.array(z.string()),
  state: z.enum(LISTED_STATES),
  /** With regions configured (docs/contract.md §7): the regions holding a live lease for the pool, sorted. */
  lease_regions: z.array(z.string()).optional(),
});
export type ListedPool = z.infer<typeof listedPoolSchema>;

/**
 * One region's status in GET /pools and every `resync`, with regions configured (docs/contract.md §7):
 * `complete: false` while it cannot be read (held since `unreachable_since`, ISO-8601), `dropped: true`
 * once the hold ran out and its pools left this replica's view, until it is read again.
 */
export const regionStatusSchema = z.object({
  name: z.string(),
  complete: z.boolean(),
  reason: z.string().optional(),
  unreachable_since: z.string().optional(),
  dropped: z.boolean(),
  /**
   * When the last outage of the region's store ended (ISO-8601, the store's clock), once one was recorded
   * (docs/contract.md §9); with it, whether its renewal window is open (leases that ran out in the outage
   * are not lapsed before it has run).
   */
  last_outage_ended: z.string().optional(),
  renewal_window_open: z.boolean().optional(),
});
export type RegionStatus = z.infer<typeof regionStatusSchema>;

export const poolListSchema = z.object({
  complete: z.boolean(),
  revision: z.string(),
  pools: z.array(listedPoolSchema),
  /** With regions configured only: one entry per region of the regions file, sorted by name. */
  regions: z.array(regionStatusSchema).optional(),
});
export type PoolList = z.infer<typeof poolListSchema>;

export const heartbeatReplySchema = z.object({
  pool: z.string(),
  lease_ms: z.number().int().positive(),
  heartbeat_interval_ms: z.number().int().positive(),
});
export type HeartbeatReply = z.infer<typeof heartbeatReplySchema>;

/** SSE events of GET /pools/watch: `event:` is the kind, `data:` the JSON below, `id:` the revision. */
export const watchEventSchemas = {
  resync: poolListSchema,
  upsert: z.object({ revision: z.string(), pool: listedPoolSchema }),
  delete: z.object({ revision: z.string(), pool: poolIdSchema }),
} as const;
export type WatchEvent =
  | { kind: 'resync'; data: PoolList }
  | { kind: 'upsert'; data: { revision: string; pool: ListedPool } }
  | { kind: 'delete'; data: { revision: string; pool: { cluster_id: string; namespace: string; name: string } } };
