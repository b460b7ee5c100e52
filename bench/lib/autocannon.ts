// Runs the autocannon load generator (bench/load/cannon.ts) in a process of its own and returns its
// result, so the load's CPU is never counted against the process under test.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CannonConfig, CannonResult } from '../load/cannon-types.js';
import { outputOf, spawnTracked } from './children.js';

const CANNON = fileURLToPath(new URL('../load/cannon.ts', import.meta.url));

export type { CannonConfig, CannonResult };

export async function runCannon(config: CannonConfig): Promise<CannonResult> {
  // Bodies can be large (1,000 registrations): a file, not an argument.
  const dir = await mkdtemp(join(tmpdir(), 'poolscope-bench-'));
  const file = join(dir, 'cannon.json');
  try {
    await writeFile(file, JSON.stringify(config));
    const child = spawnTracked(process.execPath, ['--import', 'tsx', CANNON, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = await outputOf(child, 'autocannon');
    return JSON.parse(stdout.trim().split('\n').pop()!) as CannonResult;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
