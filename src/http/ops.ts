// Operations routes: /healthz (the process serves and can read its store), /readyz (every source read
// in full once).
import { Hono } from 'hono';
import type { Join } from '../join/join.js';
import { ApiError } from './errors.js';

export function opsRoutes(join: Join): Hono {
  return new Hono()
    .get('/healthz', (c) => {
      const store = join.storeReadable;
      if (!store.ok) throw new ApiError(503, 'store_unavailable', store.reason ?? 'the store cannot be read');
      // A source's loop that failed unexpectedly and is restarting (docs/operations.md "Probes").
      const down = join.sourceDown;
      if (down !== undefined) throw new ApiError(503, 'source_down', down);
      return c.json({ status: 'ok' });
    })
    .get('/readyz', (c) => {
      if (!join.ready) {
        const reasons = join.sourceStatuses().filter((s) => !s.synced && s.name !== 'warmup');
        throw new ApiError(503, 'not_ready', reasons.map((s) => s.reason ?? s.name).join('; ') || 'not ready');
      }
      return c.json({ status: 'ready' });
    });
}
