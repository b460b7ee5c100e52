// GET /openapi.json: the description, built on first request and then served as built.
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { z } from 'zod';
import type { ApiOperation } from '../contract/index.js';
import { openApiDocument } from './document.js';

export const openApiOperations: ApiOperation[] = [
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApi',
    summary: 'This document (OpenAPI 3.1), generated from the schemas the service validates with',
    access: 'read',
    responses: { 200: { description: 'the document', json: z.record(z.string(), z.unknown()) } },
  },
];

/** GET /openapi.json, describing `operations`: every route the app serves (its own included). */
export function openApiRoutes(options: { operations: readonly ApiOperation[]; version?: string }): Hono {
  let body: string | undefined;
  return new Hono().get('/openapi.json', (c) => {
    body ??= JSON.stringify(openApiDocument({ version: options.version ?? packageVersion(), operations: options.operations }));
    return c.body(body, 200, { 'content-type': 'application/json' });
  });
}

/** poolscope's version from package.json, seen from src/openapi (tsx, vitest) or dist/src/openapi. */
function packageVersion(): string {
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'poolscope' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // Not at this level: try the next one up.
    }
  }
  return '0.0.0';
}
