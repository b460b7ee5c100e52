// Preloaded into the real binary (`node --expose-gc --import tsx --import bench/probes/heap-hook.ts
// bin/poolscope.js serve …`) so the soak part can read the heap of the process it measures without a
// debugger attached. IPC with the parent (bench/lib/soak-replica.ts):
//   ← {type: 'measure'}             → {type: 'heap', heapUsed, external, arrayBuffers, rss} after full collections
//   ← {type: 'snapshot', path}      → {type: 'snapshot', path} once v8.writeHeapSnapshot wrote it
// The IPC channel is unref'd: it never keeps the binary alive after its own shutdown.
import { setImmediate as nextTurn } from 'node:timers/promises';
import v8 from 'node:v8';

export type HookRequest = { type: 'measure' } | { type: 'snapshot'; path: string };
export type HookReply =
  | { type: 'heap'; heapUsed: number; external: number; arrayBuffers: number; rss: number }
  | { type: 'snapshot'; path: string };

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect || !process.send) throw new Error('heap-hook: run with node --expose-gc, as a child with an IPC channel');

process.channel?.unref();
process.on('message', (request: HookRequest) => {
  void answer(request).then((reply) => process.send?.(reply));
});

async function answer(request: HookRequest): Promise<HookReply> {
  await settle(collect!);
  if (request.type === 'snapshot') return { type: 'snapshot', path: v8.writeHeapSnapshot(request.path) };
  const { heapUsed, external, arrayBuffers, rss } = process.memoryUsage();
  return { type: 'heap', heapUsed, external, arrayBuffers, rss };
}

/** Full collections with turns of the event loop between them, so finalizers and weak callbacks run. */
async function settle(gc: () => void): Promise<void> {
  for (let round = 0; round < 4; round += 1) {
    gc();
    await nextTurn();
  }
}
