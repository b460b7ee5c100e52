// The binary's code cache and its script (docs/operations.md "Start-up"): the build leaves a cache made
// by a start with Node's default flags, which a default start uses as it is; a start with other flags, or
// one whose cache V8 refuses, runs the same and leaves a cache that fits it; the scripts are ASCII only.
// Run on a copy of the built command (bin/, dist/bundle/, package.json), so the dist/ other tests run is
// never touched.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REPO_ROOT } from '../support/process.js';

let copy: string;

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
  copy = mkdtempSync(join(tmpdir(), 'poolscope-code-cache-'));
  cpSync(join(REPO_ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
  cpSync(join(REPO_ROOT, 'dist', 'bundle'), join(copy, 'dist', 'bundle'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
  // Caches other runs of the suite left (tests start the binary under their own flags): only the build's.
  for (const name of caches()) if (name !== buildCache()) rmSync(join(copy, 'dist', 'bundle', name));
});

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

/** `poolscope --version` in the copy, with exactly `env` (PATH aside) as its environment. */
function version(env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['bin/poolscope.js', '--version'], { cwd: copy, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (_error, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

function caches(): string[] {
  return readdirSync(join(copy, 'dist', 'bundle')).filter((name) => name.endsWith('.v8cache'));
}

/** The cache the build made: the one in the repository's own dist/bundle written first. */
function buildCache(): string {
  const bundle = join(REPO_ROOT, 'dist', 'bundle');
  const names = readdirSync(bundle).filter((name) => name.endsWith('.v8cache'));
  const oldest = names.sort((a, b) => statSync(join(bundle, a)).mtimeMs - statSync(join(bundle, b)).mtimeMs)[0];
  if (oldest === undefined) throw new Error('the build left no code cache in dist/bundle');
  return oldest;
}

const cachePath = (name: string) => join(copy, 'dist', 'bundle', name);
const packageVersion = () => (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('the code cache of bin/poolscope.js', () => {
  it('a start with the default flags uses the build’s cache and writes none', async () => {
    const [made] = caches();
    const before = readFileSync(cachePath(made!));
    const run = await version();
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe(packageVersion());
    // Accepted: not written again (a refused cache is replaced as the process exits), and no other made.
    expect(caches()).toEqual([made]);
    expect(readFileSync(cachePath(made!)).equals(before)).toBe(true);
  });

  it('a start under other V8 flags runs the same and leaves a cache of its own, which the next such start uses', async () => {
    const env = { NODE_OPTIONS: '--max-semi-space-size=8' };
    const [made] = caches();
    const first = await version(env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout.trim()).toBe(packageVersion());
    const fresh = caches().filter((name) => name !== made);
    expect(fresh).toHaveLength(1);
    const written = readFileSync(cachePath(fresh[0]!));
    expect(written.length).toBeGreaterThan(0);

    const second = await version(env);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(caches().sort()).toEqual([made, fresh[0]].sort());
    expect(readFileSync(cachePath(fresh[0]!)).equals(written)).toBe(true);
  });

  it('a cache V8 refuses is compiled past and replaced, and the start answers as before', async () => {
    const [made] = caches().filter((name) => name === buildCache());
    writeFileSync(cachePath(made!), Buffer.from('not a code cache'));
    const run = await version();
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe(packageVersion());
    const replaced = readFileSync(cachePath(made!));
    expect(replaced.toString('latin1')).not.toBe('not a code cache');
    expect(replaced.length).toBeGreaterThan(1000);
    // No half-written file is left beside it.
    expect(readdirSync(join(copy, 'dist', 'bundle')).filter((name) => name.includes('.v8cache.'))).toEqual([]);
  });
});

describe('the bundled scripts', () => {
  // V8 holds a script's source one byte a character only when every character is ASCII: a single `§` in a
  // comment made the whole 2.6 MB bundle two bytes a character in every replica's heap (scripts/bundle.mjs).
  it.each(['poolscope.cjs', 'kube.cjs'])('%s is ASCII throughout', (name) => {
    const bytes = readFileSync(join(copy, 'dist', 'bundle', name));
    expect(bytes.length).toBeGreaterThan(100_000);
    expect(bytes.findIndex((byte) => byte > 0x7f)).toBe(-1);
  });
});
