// The machine a run was measured on, for BENCHMARKS.md.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { MachineInfo } from '../report/types.js';
import { etcdVersion } from './etcd.js';

export function describeMachine(repoRoot: string): MachineInfo {
  return {
    nproc: os.availableParallelism(),
    cpuModel: cpuModel(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    redis: firstLine(() => execFileSync('redis-server', ['--version'], { encoding: 'utf8' })),
    etcd: etcdVersion() ?? 'not installed (the etcd part is skipped)',
    os: `${os.type()} ${os.release()} ${osName()}`.trim(),
    loadAverageStart: os.loadavg()[0]!,
    gitCommit: firstLine(() => execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' })),
    gitDirty: firstLine(() => execFileSync('git', ['status', '--porcelain'], { cwd: repoRoot, encoding: 'utf8' })) !== '',
  };
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // Not Linux: fall back to what Node reports.
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

function osName(): string {
  try {
    const pretty = readFileSync('/etc/os-release', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('PRETTY_NAME='));
    return pretty ? `(${pretty.slice('PRETTY_NAME='.length).replace(/"/g, '')})` : '';
  } catch {
    return '';
  }
}

function firstLine(read: () => string): string {
  try {
    return read().split('\n')[0]!.trim();
  } catch {
    return 'unknown';
  }
}
