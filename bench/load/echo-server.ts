// The HTTP limit of the heartbeat benchmark: the smallest Hono app on @hono/node-server that does what
// every POST /pools must do at least (read the body, parse the JSON, answer 200 with a small JSON body),
// and nothing else. Run as its own process; prints {"port": N} on stdout once it listens on 127.0.0.1.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono().post('/pools', async (c) => {
  const body = (await c.req.json()) as { cluster_id?: string; namespace?: string; name?: string };
  return c.json({ pool: `${body.cluster_id}/${body.namespace}/${body.name}`, lease_ms: 15000, heartbeat_interval_ms: 5000 });
});

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.argv[2] ?? 0) }, (info) => {
  process.stdout.write(`${JSON.stringify({ port: info.port })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
