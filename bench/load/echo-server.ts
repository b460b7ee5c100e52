// The HTTP references of the heartbeat benchmark: the least a server must do for every POST /pools (read
// the body, parse the JSON, answer 200 with a small JSON body), and nothing else, in two forms:
//   raw   Node's own http server: the request and response objects, no framework. The heartbeat is
//         served on those before Hono (src/http/heartbeat.ts), so this is what the replica is judged against.
//   hono  the smallest Hono app on @hono/node-server, what a framework route adds (shown beside it).
// Run as its own process: `echo-server.ts <raw|hono> [port]`; prints {"port": N} on stdout once it listens on 127.0.0.1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

type Body = { cluster_id?: string; namespace?: string; name?: string };
const reply = (body: Body) => ({ pool: `${body.cluster_id}/${body.namespace}/${body.name}`, lease_ms: 15000, heartbeat_interval_ms: 5000 });

const kind = process.argv[2] ?? 'hono';
const port = Number(process.argv[3] ?? 0);
const listening = (info: AddressInfo) => process.stdout.write(`${JSON.stringify({ port: info.port })}\n`);
const decoder = new TextDecoder();

let server: http.Server;
if (kind === 'raw') {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      // The same decode and parse as the replica's heartbeat (a UTF-8 text, then JSON.parse).
      const body = JSON.parse(decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))) as Body;
      const text = JSON.stringify(reply(body));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.listen(port, '127.0.0.1', () => listening(server.address() as AddressInfo));
} else if (kind === 'hono') {
  const app = new Hono().post('/pools', async (c) => c.json(reply((await c.req.json()) as Body)));
  server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, listening) as http.Server;
} else {
  throw new Error(`echo-server: unknown kind ${kind} (raw or hono)`);
}
process.once('SIGTERM', () => server.close(() => process.exit(0)));
