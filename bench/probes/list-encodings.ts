// The GET /pools body at N pools in each content coding: bytes and the time to compress it, to choose the
// levels ListedView compresses at (docs/design.md "Dependencies"); then, over a socket, the reply as
// served: the first compressed reply of a revision, a cached one, and the 304 of a conditional request.
// Realistic pools: the registration the tests send, varied by cluster, name, model and addresses.
//   node --import tsx bench/probes/list-encodings.ts 10000 100000
import { request as httpRequest, Agent } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { ListedPool } from '../../src/contract/index.js';
import { poolsRoutes } from '../../src/http/pools.js';
import { listen } from '../../src/http/server.js';
import { ListedView } from '../../src/join/listed-view.js';
import { createMemoryStore } from '../../src/store/memory.js';

const gz = promisify(gzip);
const br = promisify(brotliCompress);

function pool(i: number): ListedPool {
  const cluster = `cluster-${String(i % 40).padStart(2, '0')}`;
  return {
    cluster_id: cluster,
    namespace: `llm-${i % 7}`,
    name: `pool-${i.toString(36)}-${(i * 2654435761) % 100000}`,
    model: `org-${i % 5}/Model-${i % 23}-${8 * (1 + (i % 9))}B-Instruct`,
    capabilities: ['chat', 'kv-routing'].slice(0, 1 + (i % 2)),
    capacity: [{ name: 'gpus', value: 1 + (i % 8) }],
    location: { region: `region-${i % 6}`, zone: `region-${i % 6}${'abc'[i % 3]}` },
    relays: [`http://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:9000`],
    frontends: [`http://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8000`],
    state: i % 50 === 0 ? 'frontendless' : 'live',
  };
}

async function time<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

const MiB = 1024 * 1024;
for (const n of process.argv.slice(2).map(Number)) {
  const view = new ListedView({ epoch: 1 });
  view.batch(() => {
    for (let i = 0; i < n; i++) {
      const p = pool(i);
      view.update(`${p.cluster_id}/${p.namespace}/${p.name}`, p);
    }
  });
  const identity = await time(() => view.body());
  const bytes = identity.value;
  console.log(`${n} pools: identity ${(bytes.byteLength / MiB).toFixed(2)} MiB, serialized in ${identity.ms.toFixed(0)} ms`);
  for (const level of [1, 4, 6]) {
    const r = await time(() => gz(bytes, { level }));
    console.log(`  gzip level ${level}: ${(r.value.byteLength / MiB).toFixed(2)} MiB (${((100 * r.value.byteLength) / bytes.byteLength).toFixed(1)} %) in ${r.ms.toFixed(0)} ms`);
  }
  for (const quality of [1, 4, 5, 6]) {
    const r = await time(() =>
      br(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: quality } }),
    );
    console.log(`  br quality ${quality}: ${(r.value.byteLength / MiB).toFixed(2)} MiB (${((100 * r.value.byteLength) / bytes.byteLength).toFixed(1)} %) in ${r.ms.toFixed(0)} ms`);
  }
  await served(view);
}

/** GET /pools over a keep-alive socket: status, bytes and milliseconds of one request. */
function get(url: string, agent: Agent, headers: Record<string, string>): Promise<{ status: number; bytes: number; ms: number; etag: string }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/pools`, { agent, headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - start, etag: String(res.headers.etag) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function served(view: ListedView): Promise<void> {
  const store = createMemoryStore({ leaseMs: 60_000 });
  const app = poolsRoutes({ view, store, leaseMs: 60_000, heartbeatIntervalMs: 20_000, keepAliveMs: 15_000 });
  const server = await listen({ app, host: '127.0.0.1', port: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  // The event loop's longest stall while the first compressed replies are made.
  let worst = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 5);
    last = now;
  }, 5);
  try {
    for (const coding of ['gzip', 'br'] as const) {
      const first = await get(server.url, agent, { 'accept-encoding': coding });
      const cached = await get(server.url, agent, { 'accept-encoding': coding });
      console.log(`  served ${coding}: first reply ${first.ms.toFixed(0)} ms (compressing), cached ${cached.ms.toFixed(1)} ms, ${(cached.bytes / MiB).toFixed(2)} MiB`);
    }
    console.log(`  event loop: longest stall ${worst.toFixed(0)} ms while compressing (serialization is synchronous, compression is not)`);
    const { etag } = await get(server.url, agent, { 'accept-encoding': 'gzip, br' });
    const times: number[] = [];
    for (let i = 0; i < 2000; i++) times.push((await get(server.url, agent, { 'accept-encoding': 'gzip, br', 'if-none-match': etag })).ms);
    times.sort((a, b) => a - b);
    const at = (p: number) => times[Math.floor(p * (times.length - 1))]!.toFixed(3);
    console.log(`  304: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms over 2,000 sequential requests on one keep-alive connection`);
  } finally {
    clearInterval(ticker);
    agent.destroy();
    await server.close(0);
    await store.close?.();
  }
}
