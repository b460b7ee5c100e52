// Drives bench/probes/heap-replica.ts: a replica whose heap can be read after full collections.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ProbeReply, ProbeRequest } from '../probes/heap-replica.js';
import { spawnTracked, stopChild } from './children.js';

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
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`heap probe: no ${type} within 30 s: ${stderr()}`)), 30_000);
    const onMessage = (message: ProbeReply) => {
      if (message.type === type) finish(undefined, message as Extract<ProbeReply, { type: T }>);
    };
    const onExit = (code: number | null) => finish(new Error(`heap probe exited with ${code}: ${stderr()}`));
    function finish(error?: Error, value?: Extract<ProbeReply, { type: T }>) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(value!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
