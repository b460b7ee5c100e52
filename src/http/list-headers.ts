// The response headers of a list that a client may hold and ask about again (GET /pools, GET /routers;
// docs/contract.md §5), as the OpenAPI document describes them: written once for both lists.
import { z } from 'zod';

export const noCacheHeader = z.literal('no-cache').meta({ description: 'a cache may keep the reply but must ask again each time' });

const etag = z.string().meta({ description: 'strong; changes with the revision, the filter, the completeness, the regions entries and the content coding' });

/** The headers of a 304. */
export const listHeaders = {
  ETag: etag,
  Vary: z.literal('Accept-Encoding').meta({ description: 'the reply differs with the content coding the request accepts' }),
  'Cache-Control': noCacheHeader,
};

/** The headers of a 200: a 304's, and the coding of the body. */
export const listBodyHeaders = {
  ...listHeaders,
  'Content-Encoding': z.enum(['br', 'gzip']).optional().meta({ description: 'when the request accepts one' }),
};
