// The real binary (bin/poolscope.js serve, running dist/) with bench/probes/heap-hook.ts preloaded, so its
// heap can be read after full collections, and written as a heap snapshot, while it serves; and with
// bench/probes/loop-delay-hook.mjs, so its event-loop delay can be read.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../../test/support/process.js';
import { freePort } from '../../test/support/redis-server.js';
import type { HookReply, HookRequest } from '../probes/heap-hook.js';
import { childMessage, spawnTracked, stopChild } from './children.js';
import { LOOP_DELAY_HOOK, readLoopDelay, type LoopDelay } from './loop-delay.js';

const HOOK = fileURLToPath(new URL('../probes/heap-hook.ts', import.meta.url));

export type HeapReading = Extract<HookReply, { type: 'heap' }>;

export interface SoakReplica {
  url: string;
  pid: number;
  /** Heap after full collections, and the process's RSS at that moment. */
  measure(): Promise<HeapReading>;
  /** Writes a heap snapshot (after full collections) to `path`; resolves with the path written. */
  writeSnapshot(path: string): Promise<string>;
  /** Warnings and errors the replica logged (pino level ≥ 40), as parsed lines. */
  problems(): Record<string, unknown>[];
  /** The last 4,000 characters of its stderr (Node's warnings, with their stacks). */
  stderr(): string;
  /** Its event-loop delay since the last reset (bench/probes/loop-delay-hook.mjs, preloaded). */
  loopDelay(reset: boolean): Promise<LoopDelay>;
  stop(): Promise<void>;
}

export async function startSoakReplica(serveArgs: string[]): Promise<SoakReplica> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnTracked(
    process.execPath,
    [
      '--expose-gc',
      '--trace-warnings',
      '--import',
      'tsx',
      '--import',
      HOOK,
      '--import',
      LOOP_DELAY_HOOK,
      'bin/poolscope.js',
      'serve',
      ...serveArgs,
      `--listen=127.0.0.1:${port}`,
    ],
    { cwd: REPO_ROOT, env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const problems: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (typeof parsed.level === 'number' && parsed.level >= 40 && problems.length < 200) problems.push(parsed);
      } catch {
        problems.push({ unparsed: line });
      }
    }
  });
  await untilHealthy(child, url, () => stderr);
  const ask = <T extends HookReply['type']>(request: HookRequest, type: T, timeoutMs: number) => {
    const answer = replyOf(child, type, timeoutMs, () => stderr);
    child.send(request);
    return answer;
  };
  return {
    url,
    pid: child.pid!,
    measure: () => ask({ type: 'measure' }, 'heap', 60_000),
    // Serializing the heap stops the replica and, on a loaded machine, takes minutes.
    writeSnapshot: async (path) => (await ask({ type: 'snapshot', path }, 'snapshot', 600_000)).path,
    problems: () => problems,
    stderr: () => stderr,
    loopDelay: (reset) => readLoopDelay(child, reset, () => stderr),
    stop: () => stopChild(child, { graceMs: 5000 }),
  };
}

async function untilHealthy(child: ChildProcess, url: string, stderr: () => string): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`soak replica exited with ${child.exitCode}: ${stderr()}`);
    const status = await fetch(`${url}/healthz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`soak replica on ${url} not healthy within 30 s: ${stderr()}`);
}

/** The child's next reply of `type`; rejects when it exits first or after `timeoutMs`. */
function replyOf<T extends HookReply['type']>(child: ChildProcess, type: T, timeoutMs: number, stderr: () => string): Promise<Extract<HookReply, { type: T }>> {
  const match = (message: unknown) => ((message as HookReply).type === type ? (message as Extract<HookReply, { type: T }>) : undefined);
  return childMessage(child, match, `soak replica: no ${type} reply`, stderr, timeoutMs);
}
