// The longest turn of the event loop while the listed view answers GET /pools after a change, in one
// process without HTTP: N pools (default 100,000) in a ListedView, one change, then the body asked for
// (identity and gzip) while a 1 ms timer records how late it ran. Prints the longest turn, the time to
// the whole body, and the time one change takes. `node --import tsx bench/probes/list-turns.ts [N]`.
import { ListedView } from '../../src/join/listed-view.js';
import type { ListedPool } from '../../src/contract/index.js';

const n = Number(process.argv[2] ?? 100_000);
const view = new ListedView();
const poolOf = (i: number, gpus = 8): ListedPool => ({
  cluster_id: `cluster-${i % 10}`,
  namespace: 'llm',
  name: `big-${i}`,
  model: `model-${i % 50}`,
  capabilities: ['chat', 'tools'],
  capacity: [{ name: 'gpus', value: gpus }],
  location: { region: 'us-east-1', zone: 'us-east-1a' },
  relays: [`http://10.${(i >> 8) & 255}.${i & 255}.9:9000`],
  frontends: [`http://10.${(i >> 8) & 255}.${i & 255}.7:8000`, `http://10.${(i >> 8) & 255}.${i & 255}.8:8000`],
  state: 'live',
});
view.batch(() => {
  for (let i = 0; i < n; i += 1) view.update(`cluster-${i % 10}/llm/big-${i}`, poolOf(i));
});
// The first body sorts the relisted pools once; the figures below are a change's.
await view.encoded(undefined, 'identity').bytes;

let worst = 0;
let due = performance.now() + 1;
let ticking = true;
const tick = () => {
  const now = performance.now();
  worst = Math.max(worst, now - due);
  due = now + 1;
  if (ticking) setTimeout(tick, 1);
};
setTimeout(tick, 1);
await new Promise((resolve) => setTimeout(resolve, 50));
for (let round = 0; round < 3; round += 1) {
  worst = 0;
  const changeStart = performance.now();
  view.update(`cluster-7/llm/big-7`, poolOf(7, 100 + round));
  const changeMs = performance.now() - changeStart;
  const start = performance.now();
  const identity = view.encoded(undefined, 'identity');
  const gzip = view.encoded(undefined, 'gzip');
  const [bytes] = await Promise.all([identity.bytes, gzip.bytes]);
  const ms = performance.now() - start;
  await new Promise((resolve) => setTimeout(resolve, 20));
  process.stdout.write(
    `${n} pools, ${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB: change ${changeMs.toFixed(2)} ms; body + gzip ${ms.toFixed(0)} ms; longest turn ${worst.toFixed(1)} ms\n`,
  );
}
ticking = false;
