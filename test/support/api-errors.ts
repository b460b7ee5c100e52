// A route module alone, its contract errors rendered as the app renders them (src/http/app.ts onError),
// for tests that drive one module's routes over a dependency they set up themselves.
import { Hono } from 'hono';
import { ApiError } from '../../src/http/errors.js';

export function withApiErrors(routes: Hono): Hono {
  const app = new Hono().route('/', routes);
  app.onError((error) => {
    if (error instanceof ApiError) return Response.json(error.body(), { status: error.status });
    throw error;
  });
  return app;
}
