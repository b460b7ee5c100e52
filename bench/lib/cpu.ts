// CPU time a process has used (user + system) and its resident set, read from /proc: on a shared machine,
// CPU per request is a steadier figure than requests per second, which moves with whatever else runs.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** Seconds of CPU used so far by process `pid` (Linux; NaN elsewhere). */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start with the state (field 3).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return (utime + stime) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds `pids` used while `work` ran, one per pid, and the work's result. */
export async function cpuDuring<T>(pids: ReadonlyArray<number | undefined>, work: () => Promise<T>): Promise<{ result: T; cpu: number[] }> {
  const before = pids.map(cpuSeconds);
  const result = await work();
  const cpu = pids.map((pid, i) => cpuSeconds(pid) - before[i]!);
  return { result, cpu };
}

/** Resident set of process `pid` (VmRSS in /proc, bytes; NaN when it cannot be read). */
export function rssBytes(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Number(/(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN) * 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * The whole machine's CPU so far, from /proc/stat's `cpu` line: seconds busy and seconds in all, summed
 * over every core (NaN elsewhere). Two readings give the share of the machine used in between.
 */
export function machineCpuSeconds(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    // user nice system idle iowait irq softirq steal (guest time is counted in user already)
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const idle = ticks[3]! + ticks[4]!;
    const total = ticks.reduce((sum, t) => sum + t, 0);
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return { busy: (total - idle) / ticksPerSecond, total: total / ticksPerSecond };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}
