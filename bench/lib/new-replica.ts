// How long a new replica takes to serve a complete view: spawn the binary against a Redis that already
// holds the pools, then poll GET /pools (every few ms, from the first moment it listens) until it answers
// `complete: true` with all of them.
import { spawn } from 'node:child_process';
import { REPO_ROOT } from '../../test/support/process.js';
import { freePort } from '../../test/support/redis-server.js';
import { stopChild, track } from './children.js';

export interface NewReplicaTiming {
  /** Spawn → first HTTP answer of any kind. */
  listeningMs: number;
  /** Spawn → first GET /pools with complete: true and every pool. */
  completeMs: number;
  polls: number;
}

const POLL_MS = 5;

export async function measureNewReplica(options: { args: string[]; pools: number; timeoutMs: number }): Promise<NewReplicaTiming> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/pools`;
  const start = performance.now();
  const child = track(
    spawn(process.execPath, ['bin/poolscope.js', 'serve', ...options.args, `--listen=127.0.0.1:${port}`], {
      cwd: REPO_ROOT,
      env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  try {
    let listeningMs: number | undefined;
    let polls = 0;
    while (performance.now() - start < options.timeoutMs) {
      if (child.exitCode !== null) throw new Error(`new replica exited with ${child.exitCode}: ${stderr}`);
      polls += 1;
      const text = await fetch(url).then(
        (response) => response.text(),
        () => undefined,
      );
      if (text !== undefined) {
        const answeredMs = performance.now() - start;
        listeningMs ??= answeredMs;
        // Only a complete answer is worth parsing in full.
        if (text.startsWith('{"complete":true') && (JSON.parse(text) as { pools: unknown[] }).pools.length === options.pools) {
          return { listeningMs, completeMs: answeredMs, polls };
        }
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new Error(`new replica was not complete with ${options.pools} pools within ${options.timeoutMs} ms`);
  } finally {
    await stopChild(child);
  }
}
