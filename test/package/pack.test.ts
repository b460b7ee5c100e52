// The npm package as its users get it: `npm pack` of this repository, installed into an empty folder
// from the registry as a user would, then `npx poolscope serve`. The tarball carries the shrinkwrap, so
// the user's install resolves the versions this repository tests (not whatever is newest that day), and
// no source map that points at a source the package does not hold.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, REPO_ROOT } from '../support/process.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'poolscope-pack-'));
const userDir = join(work, 'user');
let tarball = '';
let files: string[] = [];

interface LockEntry {
  version: string;
  dev?: boolean;
}
const shrinkwrap = JSON.parse(readFileSync(join(REPO_ROOT, 'npm-shrinkwrap.json'), 'utf8')) as { packages: Record<string, LockEntry> };

beforeAll(async () => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
  // --ignore-scripts: dist/ is the one the suite built (pack's `prepare` would build it again).
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: REPO_ROOT });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, packed!.filename);
  files = packed!.files.map((f) => f.path);
  mkdirSync(userDir);
  writeFileSync(join(userDir, 'package.json'), JSON.stringify({ name: 'a-user', version: '1.0.0', private: true }));
  await run('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: userDir, timeout: 240_000 });
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

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

  it('installs the production dependencies at the versions the shrinkwrap pins, and none of the dev ones', async () => {
    const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const pinned = new Set<string>();
    for (const [path, entry] of Object.entries(shrinkwrap.packages)) if (path !== '' && !entry.dev) pinned.add(`${nameOf(path)}@${entry.version}`);
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
