// Which work held a replica's event loop: for each long turn the loop-delay hook recorded
// (BENCH_LONG_TURNS_FILE), the CPU profile's samples inside that turn, by function and by stack.
// A profile alone cannot say this: a writer's 4 ms slices one after another look like one busy stretch,
// and a turn is only known by when the hook's 1 ms timer came late.
//   BENCH_SKIP_BUILD=1 BENCH_CPU_PROF=DIR BENCH_CPU_PROF_INTERVAL=500 BENCH_LONG_TURNS_FILE=TURNS \
//     node --import tsx bench/run.ts scale100k
//   node --import tsx bench/report/long-turns.ts DIR/<file>.cpuprofile TURNS [min ms, default 40]
// Only the turns after the last `reset` line are read (the part's measured window starts with one).
// Both files use the same clock: the profile's µs timestamps and the hook's process.hrtime in µs.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Frames of a sample's stack shown, leaf first. */
const STACK_DEPTH = 16;
const TOP = 8;

const [profileFile, turnsFile, minArg] = process.argv.slice(2);
if (!profileFile || !turnsFile) throw new Error('usage: long-turns.ts <profile.cpuprofile> <turns file> [min ms]');
const minMs = Number(minArg ?? 40);
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
let clock = profile.startTime;
const times = profile.timeDeltas.map((delta) => (clock += delta));

const lines = readFileSync(turnsFile, 'utf8').trim().split('\n');
const lastReset = lines.map((line) => line.endsWith(' reset')).lastIndexOf(true);
const turns = lines.slice(lastReset + 1).map((line) => line.split(' ').map(Number) as [number, number]);

const label = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'}:${node.callFrame.lineNumber + 1}`;
function stackOf(id: number): string {
  const names: string[] = [];
  for (let at: number | undefined = id; at !== undefined && names.length < STACK_DEPTH; at = parentOf.get(at)) {
    names.push(byId.get(at)!.callFrame.functionName || '(anonymous)');
  }
  return names.join(' < ');
}
function add(totals: Map<string, number>, key: string, micros: number): void {
  totals.set(key, (totals.get(key) ?? 0) + micros);
}
function top(totals: Map<string, number>): string[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([key, micros]) => `${(micros / 1000).toFixed(1).padStart(7)} ms  ${key}`);
}

for (const [endMicros, lateMs] of turns) {
  if (lateMs < minMs) continue;
  // The turn began when the timer was due: lateMs before it ran, and its 1 ms period before that.
  const startMicros = endMicros - lateMs * 1000 - 1000;
  const self = new Map<string, number>();
  const stacks = new Map<string, number>();
  for (let i = 0; i < times.length; i += 1) {
    if (times[i]! < startMicros || times[i]! > endMicros) continue;
    const micros = (times[i + 1] ?? times[i]!) - times[i]!;
    const node = byId.get(profile.samples[i]!)!;
    add(self, label(node), micros);
    add(stacks, stackOf(node.id), micros);
  }
  console.log(`\nturn ${lateMs} ms late, ${((endMicros - profile.startTime) / 1000).toFixed(0)} ms into the profile`);
  for (const line of top(self)) console.log(`  self  ${line}`);
  for (const line of top(stacks)) console.log(`  stack ${line}`);
}
