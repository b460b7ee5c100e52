// Start-up: the real binary (bin/poolscope.js serve, memory store) spawned again and again, each timed
// from the spawn to its first HTTP answer (GET /healthz polled every 2 ms from the spawn on), beside a
// bare `node:http` server spawned the same way (what Node itself costs to start and listen). Target:
// spawn → listening ≤ 150 ms (the median of the runs).
import { spawn } from 'node:child_process';
import http from 'node:http';
import { REPO_ROOT } from '../../test/support/process.js';
import { freePort } from '../../test/support/redis-server.js';
import { stopChild, track } from '../lib/children.js';
import { roundAll, summarize } from '../lib/stats.js';
import { informational, judged } from '../report/types.js';
import type { BenchPart } from './part.js';

const TARGET_MS = 150;
const POLL_MS = 2;
const TIMEOUT_MS = 20_000;
const BARE_SERVER = "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.argv[1]), '127.0.0.1')";

export const startupPart: BenchPart = {
  name: 'startup',
  async run({ sizes, logger }) {
    const { runs } = sizes.startup;
    const poolscope: number[] = [];
    const bare: number[] = [];
    logger.info({ runs }, 'startup: spawn → listening, memory store, beside a bare node:http server');
    // One of each first, not counted: the file system's cache warms as it would on a node that ran it before.
    for (let i = -1; i < runs; i += 1) {
      const port = await freePort();
      const ms = await spawnToAnswer(['bin/poolscope.js', 'serve', '--registration-storage=memory', `--listen=127.0.0.1:${port}`], port);
      const barePort = await freePort();
      const bareMs = await spawnToAnswer(['-e', BARE_SERVER, String(barePort)], barePort);
      if (i < 0) continue;
      poolscope.push(ms);
      bare.push(bareMs);
    }
    const ours = summarize(poolscope);
    const node = summarize(bare);
    return {
      part: 'startup',
      title: 'Start-up',
      method:
        `${runs} spawns of \`node bin/poolscope.js serve --registration-storage=memory\` (after one not counted), each timed from ` +
        `the spawn to its first answer to GET /healthz, polled every ${POLL_MS} ms; beside each, a bare node:http server spawned and ` +
        'timed the same way (Node\'s own start). Medians.',
      figures: [
        judged({
          id: 'startup.listening',
          label: 'spawn → listening (memory store), median',
          value: ours.p50,
          unit: 'ms',
          reference: { label: 'target', value: TARGET_MS, unit: 'ms' },
          comparison: 'at-most',
          threshold: 1,
          targetText: `≤ ${TARGET_MS} ms`,
        }),
        informational({ id: 'startup.listening_max', label: 'spawn → listening, slowest run', value: ours.max, unit: 'ms' }),
        informational({ id: 'startup.bare_node', label: 'bare node:http server: spawn → listening, median', value: node.p50, unit: 'ms' }),
      ],
      details: { poolscope: roundAll(ours), bareNode: roundAll(node), samples: { poolscope: poolscope.map(Math.round), bareNode: bare.map(Math.round) } },
    };
  },
};

/** Spawns `node <args>` and polls GET /healthz on `port` until anything answers; ms from the spawn. */
async function spawnToAnswer(args: string[], port: number): Promise<number> {
  const start = performance.now();
  const child = track(spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'warn' }, stdio: 'ignore' }));
  try {
    while (performance.now() - start < TIMEOUT_MS) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
      if (await answers(port)) return performance.now() - start;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new Error(`${args.join(' ')}: nothing answered on ${port} within ${TIMEOUT_MS} ms`);
  } finally {
    await stopChild(child);
  }
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(true));
    });
    request.once('error', () => resolve(false));
  });
}
