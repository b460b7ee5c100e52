// The npm-shrinkwrap.json that goes into the npm package: the production part of the repository's.
//
// The repository's shrinkwrap is its lock file and holds the development packages too (`npm ci` here
// installs them). Published as it is, npm would install every package it lists into each user's
// node_modules/poolscope, the development ones included, as extraneous (about 700 packages: TypeScript,
// vitest, testcontainers …), and `npm ls` would fail in the user's project. So `npm pack` and
// `npm publish` (their `prepack` script) put in its place the one npm itself derives from it for the
// production dependencies, and `postpack` puts the full one back (docs/design.md "Dependencies").
//
//   node scripts/pack-shrinkwrap.mjs production   keep the full one aside, write the production one
//   node scripts/pack-shrinkwrap.mjs restore      put the full one back (nothing to do if none is aside)
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOCK = 'npm-shrinkwrap.json';
// Outside `files` in package.json and ignored by git: never packed, never committed.
const ASIDE = '.npm-shrinkwrap.full.json';

/**
 * The production shrinkwrap of the package in `dir`, as JSON text. npm derives it: the package.json
 * without its devDependencies, with the full lock beside it, `npm install --package-lock-only` prunes
 * what nothing needs any more and keeps every locked version. Checked against the full lock: the same
 * non-development entries at the same versions, and nothing else.
 */
function productionShrinkwrap(dir) {
  const full = JSON.parse(readFileSync(join(dir, LOCK), 'utf8'));
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const work = mkdtempSync(join(tmpdir(), 'poolscope-shrinkwrap-'));
  try {
    delete pkg.devDependencies;
    writeFileSync(join(work, 'package.json'), JSON.stringify(pkg, null, 2));
    copyFileSync(join(dir, LOCK), join(work, LOCK));
    execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: work,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const text = readFileSync(join(work, LOCK), 'utf8');
    const production = JSON.parse(text);
    const expected = Object.entries(full.packages).filter(([path, entry]) => path !== '' && !entry.dev);
    const got = Object.entries(production.packages).filter(([path]) => path !== '');
    const problems = [];
    for (const [path, entry] of expected) {
      if (production.packages[path]?.version !== entry.version) problems.push(`${path}: ${entry.version} → ${production.packages[path]?.version ?? 'missing'}`);
    }
    const expectedPaths = new Set(expected.map(([path]) => path));
    for (const [path] of got) if (!expectedPaths.has(path)) problems.push(`${path}: not a production package of ${LOCK}`);
    if (problems.length > 0) throw new Error(`the production shrinkwrap differs from ${LOCK}:\n  ${problems.join('\n  ')}`);
    return text;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function main(command, dir = process.cwd()) {
  const lock = join(dir, LOCK);
  const aside = join(dir, ASIDE);
  if (command === 'production') {
    // A pack that failed before its postpack left the production one in place: the full one is aside.
    if (existsSync(aside)) renameSync(aside, lock);
    const text = productionShrinkwrap(dir);
    renameSync(lock, aside);
    writeFileSync(lock, text);
  } else if (command === 'restore') {
    if (existsSync(aside)) renameSync(aside, lock);
  } else {
    throw new Error(`usage: node scripts/pack-shrinkwrap.mjs production|restore (got ${command})`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv[2]);
