// GET /metrics: the Prometheus text exposition of this service's registry.
import { Hono } from 'hono';
import type { ServiceMetrics } from './metrics.js';

export function metricsRoutes(metrics: ServiceMetrics): Hono {
  return new Hono().get('/metrics', async (c) => {
    const { body, contentType } = await metrics.text();
    return c.body(body, 200, { 'content-type': contentType });
  });
}
