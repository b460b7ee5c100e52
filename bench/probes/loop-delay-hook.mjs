// Preloaded into the real binary (`node --import ./bench/probes/loop-delay-hook.mjs bin/poolscope.js serve …`)
// so a part can read how late the replica's event loop ran, without a debugger and without tsx (plain
// JavaScript: the replica starts as it always does). A timer asks to run every millisecond; each run
// records how late it came (a turn that held the loop for 40 ms shows as one sample of ~40 ms).
// perf_hooks.monitorEventLoopDelay is not used: on Node 20 it reported 11 ms for a 100 ms block.
// Garbage collection is watched beside it (a PerformanceObserver of 'gc' entries), so a long turn can be
// told apart from a long pause of the collector: the longest pause, its kind, and the pauses' sum.
// IPC with the parent (bench/lib/loop-delay.ts):
//   ← {type: 'loop-delay', reset}  → {type: 'loop-delay', p50, p99, max, samples, gc: {max, kind, total}} in
//     ms, since the last reset
// The IPC channel and the timer are unref'd: they never keep the binary alive after its own shutdown.
// BENCH_LONG_TURNS_FILE=<file>: each run more than 20 ms late is also appended there (`<hrtime µs> <ms late>`,
// a `<hrtime µs> reset` line at each reset), for bench/report/long-turns.ts to match with a CPU profile.
import { appendFileSync } from 'node:fs';
import { constants, createHistogram, PerformanceObserver } from 'node:perf_hooks';

if (!process.send) throw new Error('loop-delay-hook: run as a child with an IPC channel');
const PERIOD_MS = 1;
const histogram = createHistogram();
let due = performance.now() + PERIOD_MS;
const longTurns = process.env.BENCH_LONG_TURNS_FILE;
const tick = () => {
  const now = performance.now();
  // In µs (the histogram holds integers ≥ 1).
  histogram.record(Math.max(1, Math.round((now - due) * 1000)));
  if (longTurns && now - due > 20) appendFileSync(longTurns, `${process.hrtime.bigint() / 1000n} ${(now - due).toFixed(1)}\n`);
  due = now + PERIOD_MS;
  setTimeout(tick, PERIOD_MS).unref();
};
setTimeout(tick, PERIOD_MS).unref();

const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
let gc = { max: 0, kind: '', total: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.total += entry.duration;
    if (entry.duration > gc.max) {
      gc.max = entry.duration;
      gc.kind = GC_KINDS[entry.detail?.kind] ?? String(entry.detail?.kind);
    }
  }
}).observe({ entryTypes: ['gc'] });

process.channel?.unref();
process.on('message', (request) => {
  if (request?.type !== 'loop-delay') return;
  const ms = (micros) => Math.round(micros) / 1000;
  process.send?.({
    type: 'loop-delay',
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    samples: histogram.count,
    gc: { max: Math.round(gc.max * 1000) / 1000, kind: gc.kind, total: Math.round(gc.total * 1000) / 1000 },
  });
  if (request.reset) {
    if (longTurns) appendFileSync(longTurns, `${process.hrtime.bigint() / 1000n} reset\n`);
    histogram.reset();
    gc = { max: 0, kind: '', total: 0 };
  }
});
