// The part of a discovery.k8s.io/v1 EndpointSlice that poolscope reads, and its parser. Both the typed
// list reply of @kubernetes/client-node and the raw JSON of watch lines go through `parseEndpointSlice`,
// so the cache holds one shape, without managedFields and the other fields it never reads.
import { z } from 'zod';

const stringMap = z.record(z.string(), z.string());

const endpointSchema = z.object({
  addresses: z.array(z.string()).nullish(),
  // Kubernetes: a nil `ready` "should be interpreted as true" (discovery/v1 types.go).
  conditions: z
    .object({
      ready: z.boolean().nullish(),
      serving: z.boolean().nullish(),
      terminating: z.boolean().nullish(),
    })
    .nullish(),
  targetRef: z
    .object({
      kind: z.string().nullish(),
      namespace: z.string().nullish(),
      name: z.string().nullish(),
      uid: z.string().nullish(),
    })
    .nullish(),
});

const portSchema = z.object({
  name: z.string().nullish(),
  // The API server defaults a missing protocol to TCP.
  protocol: z.string().nullish(),
  // nil means "all ports" in the API; poolscope can build no URL from it.
  port: z.number().int().nullish(),
  // `https` makes frontend and router URLs https:// (docs/contract.md §10); anything else, http://.
  appProtocol: z.string().nullish(),
});

export const endpointSliceSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    namespace: z.string().min(1),
    uid: z.string().nullish(),
    resourceVersion: z.string().nullish(),
    labels: stringMap.nullish(),
    annotations: stringMap.nullish(),
  }),
  addressType: z.string(),
  endpoints: z.array(endpointSchema).nullish(),
  ports: z.array(portSchema).nullish(),
});

export type EndpointSlice = z.infer<typeof endpointSliceSchema>;
export type SliceEndpoint = z.infer<typeof endpointSchema>;
export type SlicePort = z.infer<typeof portSchema>;

/** The slice as poolscope reads it, or an error text naming the first field that does not fit. */
export function parseEndpointSlice(raw: unknown): { slice: EndpointSlice } | { error: string } {
  const parsed = endpointSliceSchema.safeParse(raw);
  if (parsed.success) return { slice: parsed.data };
  const issue = parsed.error.issues[0];
  // Stryker disable next-line OptionalChaining: equivalent, a failed parse has at least one issue
  const field = issue?.path.map(String).join('.') || '(object)';
  // Stryker disable next-line OptionalChaining,StringLiteral: equivalent, a failed parse has at least one issue, and every issue a message
  return { error: `${field}: ${issue?.message ?? 'invalid'}` };
}

/** `namespace/name`: the identity of a slice in the cache (a watch's DELETED names it the same way). */
export type SliceId = string;

export function sliceId(slice: Pick<EndpointSlice, 'metadata'>): SliceId {
  return `${slice.metadata.namespace}/${slice.metadata.name}`;
}

export const label = (slice: EndpointSlice, key: string): string | undefined =>
  slice.metadata.labels?.[key] ?? undefined;

export const annotation = (slice: EndpointSlice, key: string): string | undefined =>
  slice.metadata.annotations?.[key] ?? undefined;
