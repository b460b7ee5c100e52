// The GET /pools body at N pools in each content coding: bytes and the time to compress it, to choose the
// levels ListedView compresses at (docs/design.md "Dependencies"). Realistic pools: the registration the
// tests send, varied by cluster, name, model and addresses.
//   node --import tsx bench/probes/list-encodings.ts 10000 100000
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { ListedPool } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';

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
      br(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } }),
    );
    console.log(`  br quality ${quality}: ${(r.value.byteLength / MiB).toFixed(2)} MiB (${((100 * r.value.byteLength) / bytes.byteLength).toFixed(1)} %) in ${r.ms.toFixed(0)} ms`);
  }
}
