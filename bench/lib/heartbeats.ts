// Runs the periodic heartbeat load (bench/load/heartbeats.ts) in a process of its own.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HeartbeatLoad, TargetReport } from '../load/heartbeats.js';
import { childMessage, spawnTracked, stopChild } from './children.js';

const LOAD = fileURLToPath(new URL('../load/heartbeats.ts', import.meta.url));

export type { TargetReport };

export interface HeartbeatLoadRun {
  pid: number | undefined;
  /** Each target's counts and latency since the last reset. */
  report(reset: boolean): Promise<TargetReport[]>;
  stop(): Promise<void>;
}

export async function startHeartbeatLoad(load: HeartbeatLoad): Promise<HeartbeatLoadRun> {
  const dir = await mkdtemp(join(tmpdir(), 'poolscope-bench-'));
  const file = join(dir, 'heartbeats.json');
  await writeFile(file, JSON.stringify(load));
  const child = spawnTracked(process.execPath, ['--import', 'tsx', LOAD, file], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  return {
    pid: child.pid,
    async report(reset) {
      const answer = childMessage(
        child,
        (message) => ((message as { type?: string }).type === 'report' ? (message as { reports: TargetReport[] }).reports : undefined),
        'heartbeat load: no report',
        () => stderr,
      );
      child.send({ type: 'report', reset });
      return answer;
    },
    async stop() {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
