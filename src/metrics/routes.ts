// GET /metrics: the Prometheus text exposition of this service's registry.
import { Hono } from 'hono';
import { z } from 'zod';
import type { ApiOperation } from '../contract/index.js';
import type { ServiceMetrics } from './metrics.js';

export const metricsOperations: ApiOperation[] = [
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics (text exposition format)',
    access: 'read',
    responses: {
      200: {
        description: 'poolscope_* and process metrics (docs/operations.md "Metrics")',
        body: { contentType: 'text/plain; version=0.0.4; charset=utf-8', schema: z.string() },
      },
    },
  },
];

export function metricsRoutes(metrics: ServiceMetrics): Hono {
  return new Hono().get('/metrics', async (c) => {
    const { body, contentType } = await metrics.text();
    return c.body(body, 200, { 'content-type': contentType });
  });
}
