// The npm package as its users get it: `npm pack` of this repository, served by a registry on loopback
// (test/support/npm-registry.ts) and installed into an empty folder with `npm install poolscope` as a
// user would, then `npx poolscope serve`. The tarball carries the shrinkwrap, so the user's install
// resolves the versions this repository tests (not whatever is newest that day), and no source map that
// points at a source the package does not hold. Installed from the tarball file instead, npm would not
// read the shrinkwrap at all (see the registry's header).
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startNpmRegistry, type NpmRegistry } from '../support/npm-registry.js';
import { freePort, REPO_ROOT } from '../support/process.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'poolscope-pack-'));
const userDir = join(work, 'user');
const stageDir = join(work, 'stage');
let tarball = '';
let files: string[] = [];
let registry: NpmRegistry | undefined;
let packageName = '';

interface LockEntry {
  version: string;
  dev?: boolean;
}
const shrinkwrap = JSON.parse(readFileSync(join(REPO_ROOT, 'npm-shrinkwrap.json'), 'utf8')) as { packages: Record<string, LockEntry> };

beforeAll(async () => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
  // Packed as `npm pack` packs it (prepack, pack, postpack), from a copy of what it reads, so that the
  // repository's own shrinkwrap is never swapped while other tests run: --ignore-scripts on the pack
  // itself because its `prepare` would build dist/ again, which the suite already built.
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { files: string[] };
  for (const path of ['package.json', 'npm-shrinkwrap.json', 'scripts/pack-shrinkwrap.mjs', ...pkg.files]) {
    cpSync(join(REPO_ROOT, path), join(stageDir, path), { recursive: true });
  }
  await run('npm', ['run', 'prepack'], { cwd: stageDir });
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: stageDir });
  await run('npm', ['run', 'postpack'], { cwd: stageDir });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  files = packed!.files.map((f) => f.path);
  mkdirSync(userDir);
  writeFileSync(join(userDir, 'package.json'), JSON.stringify({ name: 'a-user', version: '1.0.0', private: true }));
  const manifest = JSON.parse((await run('tar', ['-xzOf', tarball, 'package/package.json'])).stdout) as { name: string; version: string };
  packageName = manifest.name;
  const upstream = (await run('npm', ['config', 'get', 'registry'], { cwd: userDir })).stdout.trim();
  registry = await startNpmRegistry({ tarball, manifest, files, upstream });
  const spec = `${manifest.name}@${manifest.version}`;
  await run('npm', ['install', '--no-audit', '--no-fund', '--registry', registry.url, spec], { cwd: userDir, timeout: 240_000 });
}, 300_000);

afterAll(async () => {
  await registry?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds the shrinkwrap, the CLI and the typings of its exports, and no source map without its source', () => {
    expect(files).toContain('npm-shrinkwrap.json');
    expect(files).toContain('bin/poolscope.js');
    expect(files).toContain('dist/src/cli/main.js');
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { types?: string }> };
    for (const entry of Object.values(pkg.exports)) if (entry.types) expect(files).toContain(entry.types.replace(/^\.\//, ''));
    const maps = files.filter((f) => f.endsWith('.map'));
    const sources = new Set(files);
    for (const map of maps) {
      const { sources: mapped } = JSON.parse(readFileSync(join(REPO_ROOT, map), 'utf8')) as { sources: string[] };
      for (const source of mapped) expect(sources.has(join(map, '..', source)), `${map} → ${source}`).toBe(true);
    }
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it('ships the production part of the shrinkwrap, and postpack puts the full one back', async () => {
    const packedLock = JSON.parse((await run('tar', ['-xzOf', tarball, 'package/npm-shrinkwrap.json'], { maxBuffer: 64 << 20 })).stdout) as {
      packages: Record<string, LockEntry>;
    };
    const production = Object.entries(shrinkwrap.packages).filter(([path, entry]) => path !== '' && !entry.dev);
    expect(production.length).toBeGreaterThan(20);
    expect(Object.keys(packedLock.packages).filter((path) => path !== '').sort()).toEqual(production.map(([path]) => path).sort());
    for (const [path, entry] of production) expect(packedLock.packages[path]!.version, path).toBe(entry.version);
    expect(readFileSync(join(stageDir, 'npm-shrinkwrap.json'), 'utf8')).toBe(readFileSync(join(REPO_ROOT, 'npm-shrinkwrap.json'), 'utf8'));
  });

  it('installs the production dependencies at the versions the shrinkwrap pins, and none of the dev ones', async () => {
    // The package was resolved through the registry, not from a file (its tarball's bytes may come from
    // npm's cache, which holds them by their integrity once any install has).
    expect(registry!.requests).toContain(`/${packageName}`);
    const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const pinned = new Set<string>();
    for (const [path, entry] of Object.entries(shrinkwrap.packages)) if (path !== '' && !entry.dev) pinned.add(`${nameOf(path)}@${entry.version}`);
    // `npm ls` fails on a package the tree does not need (extraneous), as the development packages of a
    // full shrinkwrap would be: so this also says none was installed beside the tree.
    const { stdout } = await run('npm', ['ls', '--all', '--json'], { cwd: userDir });
    interface Node {
      version?: string;
      dependencies?: Record<string, Node>;
    }
    const installed = new Set<string>();
    const walk = (deps: Record<string, Node> = {}) => {
      for (const [name, node] of Object.entries(deps)) {
        // An optional peer nobody asked for (node-fetch's `encoding`) is listed without a version.
        if (node.version === undefined) continue;
        installed.add(`${name}@${node.version}`);
        walk(node.dependencies);
      }
    };
    walk((JSON.parse(stdout) as { dependencies: { poolscope: Node } }).dependencies.poolscope.dependencies);
    expect(installed.size).toBeGreaterThan(20);
    for (const entry of installed) expect(pinned.has(entry), entry).toBe(true);
    // The two the issue found drifting without a shrinkwrap: @kubernetes/client-node's typings.
    for (const name of ['@types/node', 'undici-types']) {
      const version = shrinkwrap.packages[`node_modules/@kubernetes/client-node/node_modules/${name}`]!.version;
      expect(installed.has(`${name}@${version}`), `${name}@${version}`).toBe(true);
    }
    for (const dev of ['typescript', 'vitest', 'testcontainers']) expect([...installed].some((e) => e.startsWith(`${dev}@`)), dev).toBe(false);
  });

  it('`npx poolscope serve` serves /livez and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn('npx', ['--no-install', 'poolscope', 'serve', `--listen=127.0.0.1:${port}`], {
      cwd: userDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/livez`).catch(() => undefined))?.status === 200, {
        timeoutMs: 20_000,
        message: `npx poolscope serve on ${port}`,
      });
      // To the server itself (its pid from its log lines): npx does not pass a SIGTERM of its own on, so
      // a supervisor should run node_modules/.bin/poolscope directly (README "Install").
      const pid = Number(/"pid":(\d+)/.exec(output)?.[1]);
      expect(pid).not.toBe(child.pid);
      process.kill(pid, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('"msg":"stopped"');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
});
