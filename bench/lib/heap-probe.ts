// Drives bench/probes/heap-replica.ts: a replica whose heap can be read after full collections.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ProbeReply, ProbeRequest } from '../probes/heap-replica.js';
import { childMessage, spawnTracked, stopChild } from './children.js';

const PROBE = fileURLToPath(new URL('../probes/heap-replica.ts', import.meta.url));

export interface HeapProbe {
  url: string;
  /** Heap used (bytes) after full collections. */
  heapUsed(): Promise<number>;
  stop(): Promise<void>;
}

export async function startHeapProbe(serveArgs: string[]): Promise<HeapProbe> {
  const child = spawnTracked(process.execPath, ['--expose-gc', '--import', 'tsx', PROBE, ...serveArgs], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const ready = await reply(child, 'ready', () => stderr);
  return {
    url: ready.url,
    async heapUsed() {
      const answer = reply(child, 'heap', () => stderr);
      child.send({ type: 'measure' } satisfies ProbeRequest);
      return (await answer).heapUsed;
    },
    async stop() {
      // Drains like the binary does on SIGTERM; killed if that takes more than a few seconds.
      const asked = child.connected && child.send({ type: 'stop' } satisfies ProbeRequest);
      await stopChild(child, { signal: asked ? null : 'SIGKILL', graceMs: 5000 });
    },
  };
}

function reply<T extends ProbeReply['type']>(child: ChildProcess, type: T, stderr: () => string): Promise<Extract<ProbeReply, { type: T }>> {
  return childMessage(
    child,
    (message) => ((message as ProbeReply).type === type ? (message as Extract<ProbeReply, { type: T }>) : undefined),
    `heap probe: no ${type}`,
    stderr,
  );
}
