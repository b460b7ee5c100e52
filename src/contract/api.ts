// How a route declares what it is, for the OpenAPI document (docs/contract.md §11). Each route module
// lists its operations beside its handlers, with the very zod schemas the handlers validate and answer
// with; src/openapi turns the lists into the document and adds what every route shares (the statuses the
// HTTP parser answers with, the security the route's access needs, HEAD beside GET). Adding a route is
// adding an entry.
import type { z } from 'zod';
import type { ErrorCode } from './errors.js';

/**
 * Who may call the route (docs/contract.md §8): `write` takes a write token when `--auth-token-file` is
 * set; `read` a read or write token when `--read-token-file` is set; `probe` is always open. With
 * `--tls-client-ca-path` every route also needs a client certificate.
 */
export type Access = 'write' | 'read' | 'probe';

export interface ApiResponse {
  description: string;
  /** A JSON body (`application/json`). */
  json?: z.ZodType;
  /** A body of another media type. */
  body?: { contentType: string; schema: z.ZodType };
  /** A Server-Sent Events stream: each event's name and the JSON schema of its `data:`. */
  events?: Record<string, z.ZodType>;
  /** The contract's error body, with one of these codes. */
  errors?: readonly ErrorCode[];
  /** Response headers: name and schema (its description in `.meta`). */
  headers?: Record<string, z.ZodType>;
}

export interface ApiOperation {
  method: 'get' | 'post';
  /** OpenAPI path template: `/debug/pools/{cluster_id}/{namespace}/{name}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  access: Access;
  /** Query, header and path parameters, one zod object each. */
  query?: z.ZodObject;
  headers?: z.ZodObject;
  params?: z.ZodObject;
  /** The request body: its schema and every content type the route takes for it. */
  body?: { schema: z.ZodType; contentTypes: readonly string[]; description?: string };
  /** What the route itself answers; the generator adds the statuses every route shares. */
  responses: Partial<Record<number, ApiResponse>>;
}
