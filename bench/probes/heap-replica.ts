// A poolscope replica in a process of its own, started with `node --expose-gc`, whose heap the scale part
// reads: the same service the binary runs (startServe, Redis store, pool actors, observability), with a
// silent logger. Serve flags come as arguments. IPC with the parent (bench/lib/heap-probe.ts):
//   → {type: 'ready', url}         once it listens
//   ← {type: 'measure'}            → {type: 'heap', heapUsed, external, rss} after full collections
//   ← {type: 'stop'}               drains and exits
import { setImmediate as nextTurn } from 'node:timers/promises';
import { pino } from 'pino';
import { parseServeFlags } from '../../src/cli/flags.js';
import { startServe } from '../../src/service/start.js';

export type ProbeRequest = { type: 'measure' } | { type: 'stop' };
export type ProbeReply = { type: 'ready'; url: string } | { type: 'heap'; heapUsed: number; external: number; rss: number };

const collect = (globalThis as { gc?: () => void }).gc;

async function main(): Promise<void> {
  if (!collect || !process.send) throw new Error('run with node --expose-gc, as a child with an IPC channel');
  const parsed = parseServeFlags(process.argv.slice(2), {});
  if (!parsed.ok) throw new Error(`${parsed.flag}: ${parsed.message}`);
  const handle = await startServe(parsed.config, pino({ level: 'silent' }));
  const send = (reply: ProbeReply) => process.send!(reply);
  process.on('message', (request: ProbeRequest) => {
    if (request.type === 'measure') {
      void settledHeap(collect).then((heap) => send({ type: 'heap', ...heap }));
    } else {
      void handle.stop().then(() => process.disconnect());
    }
  });
  send({ type: 'ready', url: handle.server.url });
}

/** Heap after full collections, with turns of the event loop between them so finalizers can run. */
async function settledHeap(gc: () => void): Promise<{ heapUsed: number; external: number; rss: number }> {
  for (let round = 0; round < 4; round += 1) {
    gc();
    await nextTurn();
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heapUsed, external, rss };
}

await main();
