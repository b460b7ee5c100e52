// Operations routes (docs/operations.md "Probes"): /livez (the process serves HTTP; it depends on no store
// or source, so a store outage never makes a liveness probe restart a replica), /healthz (the process serves
// and can read its store; with the store's last outage once there was one), /readyz (the home store, and
// the EndpointSlices in mcs/karmada modes, read in full once; followed regions never hold it back).
import { Hono } from 'hono';
import { z } from 'zod';
import type { ApiOperation } from '../contract/index.js';
import type { Join } from '../join/join.js';
import { ApiError } from './errors.js';

export function opsRoutes(join: Join): Hono {
  return new Hono()
    .get('/livez', (c) => c.json({ status: 'ok' }))
    .get('/healthz', (c) => {
      const store = join.storeReadable;
      if (!store.ok) throw new ApiError(503, 'store_unavailable', store.reason ?? 'the store cannot be read');
      // A source's loop that failed unexpectedly and is restarting (docs/operations.md "Probes").
      const down = join.sourceDown;
      if (down !== undefined) throw new ApiError(503, 'source_down', down);
      const window = join.homeWindow;
      return c.json({ status: 'ok', ...(window ? { store: window } : {}) });
    })
    .get('/readyz', (c) => {
      if (!join.ready) {
        const waitingFor = new Set(join.readinessSources());
        const reasons = join.sourceStatuses().filter((s) => !s.synced && waitingFor.has(s.name));
        throw new ApiError(503, 'not_ready', reasons.map((s) => s.reason ?? s.name).join('; ') || 'not ready');
      }
      return c.json({ status: 'ready' });
    });
}

const ok = z.object({ status: z.literal('ok') });

export const opsOperations: ApiOperation[] = [
  {
    method: 'get',
    path: '/livez',
    operationId: 'live',
    summary: 'The process serves HTTP (depends on no store or source: the liveness probe)',
    access: 'probe',
    responses: { 200: { description: 'serving', json: ok } },
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'The process serves and can read the store it writes to',
    access: 'probe',
    responses: {
      200: { description: 'serving', json: ok },
      503: { description: 'the store cannot be read, or a source’s loop failed and is restarting; the message names it', errors: ['store_unavailable', 'source_down'] },
    },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    summary: 'Every source has been read in full once',
    access: 'probe',
    responses: {
      200: { description: 'ready', json: z.object({ status: z.literal('ready') }) },
      503: { description: 'a source has not been read in full yet; the message names it', errors: ['not_ready'] },
    },
  },
];
