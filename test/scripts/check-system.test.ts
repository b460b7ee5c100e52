// scripts/check-system.mjs, the first step of `npm test`: silent when every system program is there; else
// one line naming the `apt-get install -y` that brings what is missing, and exit 1. Run with a PATH and a
// CHROMIUM_PATH of the test's own, holding stand-ins for the programs.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/process.js';

/** The monitoring tests' programs, both from Debian's `prometheus` package. */
const PROMETHEUS = ['prometheus', 'promtool'];
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A PATH directory holding executable stand-ins for `programs`, and a Chromium stand-in unless left out. */
function machine(programs: string[], options: { chromium?: boolean; notExecutable?: string[] } = {}): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'poolscope-check-'));
  dirs.push(dir);
  for (const program of [...programs, ...(options.chromium === false ? [] : ['chromium'])]) {
    writeFileSync(join(dir, program), '#!/bin/sh\n');
    chmodSync(join(dir, program), 0o755);
  }
  for (const program of options.notExecutable ?? []) writeFileSync(join(dir, program), '');
  return { PATH: dir, CHROMIUM_PATH: join(dir, 'chromium') };
}

function check(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/check-system.mjs'], { cwd: REPO_ROOT, env }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

describe('scripts/check-system.mjs', () => {
  it('prints nothing and exits 0 when every program is there', async () => {
    expect(await check(machine(['redis-server', 'redis-cli', 'openssl', ...PROMETHEUS]))).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it.each([
    [['redis-cli', 'openssl', ...PROMETHEUS], true, 'redis-server', 'apt-get install -y redis-server'],
    [['openssl', ...PROMETHEUS], true, 'redis-server, redis-cli', 'apt-get install -y redis-server redis-tools'],
    [['redis-server', 'redis-cli', ...PROMETHEUS], true, 'openssl', 'apt-get install -y openssl'],
    [['redis-server', 'redis-cli', 'openssl', ...PROMETHEUS], false, 'chromium', 'apt-get install -y chromium'],
    [['redis-server', 'redis-cli', 'openssl', 'prometheus'], true, 'promtool', 'apt-get install -y prometheus'],
    // Both come from one package, named once.
    [['redis-server', 'redis-cli', 'openssl'], true, 'prometheus, promtool', 'apt-get install -y prometheus'],
    [[], false, 'redis-server, redis-cli, openssl, chromium, prometheus, promtool', 'apt-get install -y redis-server redis-tools openssl chromium prometheus'],
  ])('with only %j (chromium: %s) names %s and the install in one line', async (present, chromium, missing, install) => {
    const env = machine(present, { chromium });
    const result = await check(env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toEqual([expect.stringContaining(install), '']);
    // The whole list of packages, each once.
    expect(result.stderr.trimEnd().endsWith(`: ${install}`)).toBe(true);
    for (const program of missing.split(', ')) {
      expect(result.stderr).toContain(program === 'chromium' ? env.CHROMIUM_PATH! : program);
    }
  });

  it('does not count a file that is not executable', async () => {
    const result = await check(machine(['redis-cli', 'openssl', ...PROMETHEUS], { notExecutable: ['redis-server'] }));
    expect(result).toMatchObject({ code: 1, stderr: 'npm test needs redis-server: apt-get install -y redis-server\n' });
  });
});
