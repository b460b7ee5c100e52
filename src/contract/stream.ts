// The events every Server-Sent Events stream of the service may end with (docs/contract.md §11), beside
// its own (`resync`, `upsert`, `delete` on /pools/watch): a stream the server chooses to end says so in a
// last event, so a client can tell it from a cut connection.
import { z } from 'zod';
import { errorBodySchema } from './errors.js';

export const streamEndSchemas = {
  /** A watcher refused by `--max-watchers` whose request accepts event streams: the 503's body, then the end. */
  overloaded: errorBodySchema,
  /** The replica drains (SIGTERM): the last event of every stream. */
  closing: z.object({ reason: z.string().meta({ description: 'why the stream ends, e.g. "the replica is shutting down"' }) }),
} as const;
export type StreamEnd = keyof typeof streamEndSchemas;
