// A flood of distinct GET /pools?model= filters against the in-process service at N pools, while /healthz
// is asked every 10 ms (bench/lib/filter-flood.ts, the figure the scale100k part judges), without Redis or
// a new replica: a quick look while developing. The pools are registrations through the memory store, in
// 20 models.
//   node --import tsx bench/probes/filter-flood.ts 100000
import { pino } from 'pino';
import { registration } from '../../test/support/registration.js';
import { startService } from '../../test/support/service.js';
import { readPools } from '../lib/http.js';
import { floodFilters } from '../lib/filter-flood.js';

const pools = Number(process.argv[2] ?? 100_000);
const svc = await startService({ leaseMs: 3_600_000, logs: { logger: pino({ level: 'silent' }), lines: [], warnings: () => [] } });
try {
  for (let i = 0; i < pools; i += 1000) {
    await Promise.all(
      Array.from({ length: Math.min(1000, pools - i) }, (_, j) =>
        svc.store.heartbeat(registration({ cluster_id: `cluster-${(i + j) % 40}`, name: `pool-${i + j}`, model: `model-${(i + j) % 20}` })),
      ),
    );
  }
  // Listed (a memory store reports `complete` only after one lease of warm-up, which this probe does not need).
  while ((await readPools(svc.url)).count < pools) await new Promise((resolve) => setTimeout(resolve, 100));
  const result = await floodFilters(svc.url, { filters: 1000, concurrency: 8 });
  console.log(JSON.stringify(result, null, 2));
} finally {
  await svc.stop();
}
