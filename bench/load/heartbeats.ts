// Periodic heartbeats, as a fleet's PoolRelays send them: every pool POSTs its registration once per
// interval, the pools spread evenly over it (not a closed loop: a slow replica gets the same rate and its
// latency grows). Run as its own process (bench/lib/heartbeats.ts spawns it) so its CPU is not the
// measured processes'. Reads a HeartbeatLoad from the JSON file named by argv[2]; on `{type: 'report',
// reset}` over IPC answers each target's counts and latency (ms) since the last reset; stops on SIGTERM.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

export interface HeartbeatLoad {
  targets: { url: string; bodies: string[] }[];
  intervalMs: number;
}

export interface TargetReport {
  url: string;
  sent: number;
  ok: number;
  status5xx: number;
  otherStatus: number;
  errors: number;
  latency: { p50: number; p99: number; max: number };
}

const TICK_MS = 10;

interface Target {
  url: URL;
  bodies: Buffer[];
  agent: http.Agent;
  next: number;
  due: number;
  histogram: RecordableHistogram;
  counts: { sent: number; ok: number; status5xx: number; otherStatus: number; errors: number };
}

const load = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as HeartbeatLoad;
const targets: Target[] = load.targets.map(({ url, bodies }) => ({
  url: new URL('/pools', url),
  bodies: bodies.map((body) => Buffer.from(body)),
  agent: new http.Agent({ keepAlive: true, maxSockets: 32 }),
  next: 0,
  due: 0,
  histogram: createHistogram(),
  counts: { sent: 0, ok: 0, status5xx: 0, otherStatus: 0, errors: 0 },
}));

function send(target: Target, body: Buffer): void {
  const start = performance.now();
  target.counts.sent += 1;
  const request = http.request(
    target.url,
    { method: 'POST', agent: target.agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
    (response) => {
      response.resume();
      response.once('end', () => {
        target.histogram.record(Math.max(1, Math.round((performance.now() - start) * 1000)));
        const status = response.statusCode ?? 0;
        if (status === 200) target.counts.ok += 1;
        else if (status >= 500) target.counts.status5xx += 1;
        else target.counts.otherStatus += 1;
      });
    },
  );
  request.once('error', () => (target.counts.errors += 1));
  request.end(body);
}

let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  const elapsed = now - last;
  last = now;
  for (const target of targets) {
    // Pools due in this tick: the share of the interval that passed, carried over in fractions.
    target.due += (target.bodies.length * elapsed) / load.intervalMs;
    while (target.due >= 1) {
      target.due -= 1;
      send(target, target.bodies[target.next]!);
      target.next = (target.next + 1) % target.bodies.length;
    }
  }
}, TICK_MS);

process.on('message', (message: { type?: string; reset?: boolean }) => {
  if (message.type !== 'report') return;
  const ms = (micros: number) => Math.round(micros) / 1000;
  const reports: TargetReport[] = targets.map((target) => ({
    url: target.url.origin,
    ...target.counts,
    latency: { p50: ms(target.histogram.percentile(50)), p99: ms(target.histogram.percentile(99)), max: ms(target.histogram.max) },
  }));
  process.send?.({ type: 'report', reports });
  if (message.reset) {
    for (const target of targets) {
      target.histogram.reset();
      target.counts = { sent: 0, ok: 0, status5xx: 0, otherStatus: 0, errors: 0 };
    }
  }
});
process.once('SIGTERM', () => {
  clearInterval(timer);
  for (const target of targets) target.agent.destroy();
  process.exit(0);
});
