// Routers (docs/contract.md §10): the Global Router replicas PoolRelays connect to. The registration a
// router heartbeats with POST /routers, the listed router GET /routers answers with, the list and the
// watch events: the only place their field rules live.
import { z } from 'zod';
import { httpUrl, MAX_NAME_LENGTH } from './registration.js';
import { regionStatusSchema } from './pool.js';

/** A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63 characters. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const MAX_ROUTER_ID_LENGTH = 63;

/** A router id: a DNS-1123 label (a pod name is one). */
export const routerId = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_ROUTER_ID_LENGTH, `must be at most ${MAX_ROUTER_ID_LENGTH} characters`)
  .regex(DNS1123_LABEL, 'must be a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)');

/** Where a listed router comes from (docs/contract.md §10). */
export const ROUTER_SOURCES = ['registration', 'static', 'mcs'] as const;
export type RouterSource = (typeof ROUTER_SOURCES)[number];

/** What a router replica sends with POST /routers. Unknown keys are refused. */
export const routerRegistrationSchema = z.strictObject({
  id: routerId,
  url: httpUrl,
  region: z.string().max(MAX_NAME_LENGTH).optional(),
  zone: z.string().max(MAX_NAME_LENGTH).optional(),
});
export type RouterRegistration = z.output<typeof routerRegistrationSchema>;

export const routerHeartbeatReplySchema = z.object({
  router: z.string().meta({ description: 'the id registered' }),
  lease_ms: z.number().int().positive(),
  heartbeat_interval_ms: z.number().int().positive(),
});
export type RouterHeartbeatReply = z.infer<typeof routerHeartbeatReplySchema>;

export const listedRouterSchema = z.object({
  id: z.string(),
  url: z.string(),
  region: z.string().optional(),
  zone: z.string().optional(),
  source: z.enum(ROUTER_SOURCES),
  /** Registered routers, with regions configured: the regions holding a live lease for it, sorted. */
  lease_regions: z.array(z.string()).optional(),
});
export type ListedRouter = z.infer<typeof listedRouterSchema>;

export const routerListSchema = z.object({
  complete: z.boolean(),
  revision: z.string(),
  routers: z.array(listedRouterSchema),
  /** With regions configured only: one entry per region, sorted by name (as in GET /pools). */
  regions: z.array(regionStatusSchema).optional(),
});
export type RouterList = z.infer<typeof routerListSchema>;

export const routerIdSchema = z.object({ id: z.string() });

/** SSE events of GET /routers/watch: as /pools/watch, with `router` in place of `pool`. */
export const routerWatchEventSchemas = {
  resync: routerListSchema,
  upsert: z.object({ revision: z.string(), router: listedRouterSchema }),
  delete: z.object({ revision: z.string(), router: routerIdSchema }),
} as const;
export type RouterWatchEvent =
  | { kind: 'resync'; data: RouterList }
  | { kind: 'upsert'; data: { revision: string; router: ListedRouter } }
  | { kind: 'delete'; data: { revision: string; router: { id: string } } };

/**
 * A `--router id=url` value read, or the rule it breaks. The id is a router id, the url an http(s) URL
 * with a host (the rules of POST /routers).
 */
export function parseStaticRouter(value: string): { id: string; url: string } | string {
  const at = value.indexOf('=');
  if (at < 0) return `${JSON.stringify(value)}: must be ID=URL (e.g. gr-0=http://10.0.1.5:9100)`;
  const id = value.slice(0, at);
  const url = value.slice(at + 1);
  const idCheck = routerId.safeParse(id);
  if (!idCheck.success) return `${JSON.stringify(value)}: the id ${idCheck.error.issues[0]!.message}`;
  const urlCheck = httpUrl.safeParse(url);
  if (!urlCheck.success) return `${JSON.stringify(value)}: the url ${urlCheck.error.issues[0]!.message}`;
  return { id, url };
}

/** GET /debug/routers: every listed router, grouped by its region ("" for none) and source, and why the list may be incomplete. */
export const debugRouterListSchema = z.object({
  complete: z.boolean(),
  reasons: z.array(z.string()),
  regions: z.array(
    z.object({
      region: z.string(),
      sources: z.array(z.object({ source: z.enum(ROUTER_SOURCES), routers: z.array(listedRouterSchema) })),
    }),
  ),
});
export type DebugRouterList = z.infer<typeof debugRouterListSchema>;
