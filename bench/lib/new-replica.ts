// How long a new replica takes to serve a complete view: spawn the binary against a Redis that already
// holds the pools, then poll GET /pools (every few ms, from the first moment it listens) until it answers
// `complete: true` with all of them. Its resident set is read at that moment; `whileComplete` measures
// more on the running replica before it is stopped.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { REPO_ROOT } from '../../test/support/process.js';
import { freePort } from '../../test/support/redis-server.js';
import { stopChild, track } from './children.js';
import { rssBytes } from './cpu.js';
import { LOOP_DELAY_HOOK, readLoopDelay, type LoopDelay } from './loop-delay.js';
import { cpuProfileArgs } from './replicas.js';

export interface NewReplicaTiming {
  /** Spawn → first HTTP answer of any kind. */
  listeningMs: number;
  /** Spawn → first GET /pools with complete: true and every pool, received in full. */
  completeMs: number;
  /** The replica's VmRSS right after that answer. */
  rssBytes: number;
  /** Bytes of that answer (identity: the polls ask for no compression). */
  bodyBytes: number;
  polls: number;
}

export interface RunningReplica {
  url: string;
  pid: number;
  /** Its event-loop delay since the last reset (bench/probes/loop-delay-hook.mjs, preloaded). */
  loopDelay(reset: boolean): Promise<LoopDelay>;
}

const POLL_MS = 5;
const COMPLETE_HEAD = '{"complete":true';

export async function measureNewReplica<T = undefined>(options: {
  args: string[];
  pools: number;
  timeoutMs: number;
  whileComplete?: (replica: RunningReplica) => Promise<T>;
}): Promise<NewReplicaTiming & { whileComplete?: T }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const start = performance.now();
  const child = track(
    spawn(process.execPath, [...cpuProfileArgs(), '--import', LOOP_DELAY_HOOK, 'bin/poolscope.js', 'serve', ...options.args, `--listen=127.0.0.1:${port}`], {
      cwd: REPO_ROOT,
      env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
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
      const text = await completeBody(`${base}/pools`).catch(() => undefined);
      if (text !== undefined) {
        const answeredMs = performance.now() - start;
        listeningMs ??= answeredMs;
        if (text !== null && (JSON.parse(text) as { pools: unknown[] }).pools.length === options.pools) {
          const timing = { listeningMs, completeMs: answeredMs, rssBytes: rssBytes(child.pid), bodyBytes: Buffer.byteLength(text), polls };
          if (!options.whileComplete) return timing;
          const loopDelay = (reset: boolean) => readLoopDelay(child, reset, () => stderr);
          return { ...timing, whileComplete: await options.whileComplete({ url: base, pid: child.pid!, loopDelay }) };
        }
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new Error(`new replica was not complete with ${options.pools} pools within ${options.timeoutMs} ms`);
  } finally {
    await stopChild(child);
  }
}

/**
 * GET /pools without compression: the whole body when it starts `{"complete":true`, `null` for any other
 * answer (an incomplete list is dropped after its first bytes, so polling a multi-MiB list while it
 * loads costs the replica little); rejects when nothing listens yet.
 */
function completeBody(url: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { 'accept-encoding': 'identity' } }, (response) => {
      const chunks: Buffer[] = [];
      let length = 0;
      let judged = false;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (judged || length < COMPLETE_HEAD.length) return;
        judged = true;
        if (response.statusCode !== 200 || !Buffer.concat(chunks).subarray(0, COMPLETE_HEAD.length).equals(Buffer.from(COMPLETE_HEAD))) {
          resolve(null);
          request.destroy();
        }
      });
      response.once('end', () => resolve(judged ? Buffer.concat(chunks).toString('utf8') : null));
      response.once('error', () => resolve(null));
    });
    request.once('error', reject);
  });
}
