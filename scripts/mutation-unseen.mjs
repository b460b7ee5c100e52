// What a part's results rest on that StrykerJS's incremental diff does not see. The diff compares the
// mutated files and the test files with those in the part's baseline (mutation-baseline/<part>.json); a
// test helper, the locked dependencies, the parts file or the mutation run's vitest configuration can
// change what a test does while neither changes. So a full run records their digests beside the baselines
// (mutation-baseline/unseen-inputs.json, per part), and every later run names those that differ: its
// reused results were judged with other ones, and `npm run mutation -- --full <part>` judges again.
// (Modules no part mutates that a test loads are not listed: every part's tests load most of src/, so
// naming each change to them would name every change; README "Development" says when to run --full.)
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';

export const UNSEEN_RECORD = 'mutation-baseline/unseen-inputs.json';
const UNSEEN_FILES = ['npm-shrinkwrap.json', 'vitest.mutation.config.ts', 'scripts/mutation-parts.mjs'];
const UNSEEN_FOLDERS = ['test/support'];

/** Path (from the repository's root) → SHA-256 of each input the diff does not see, as it is now. */
export async function unseenInputs(repoRoot) {
  const paths = [...UNSEEN_FILES];
  for (const folder of UNSEEN_FOLDERS) {
    const entries = await readdir(`${repoRoot}${folder}`, { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (entry.isFile()) paths.push(`${entry.parentPath ?? entry.path}/${entry.name}`.slice(repoRoot.length));
    }
  }
  const digests = {};
  for (const path of paths.sort()) {
    digests[path] = createHash('sha256').update(await readFile(`${repoRoot}${path}`)).digest('hex');
  }
  return digests;
}

async function readRecord(repoRoot) {
  try {
    return JSON.parse(await readFile(`${repoRoot}${UNSEEN_RECORD}`, 'utf8'));
  } catch {
    return {};
  }
}

/** After a part's full run: its baseline now rests on the inputs as they are. */
export async function recordUnseen(repoRoot, names, now) {
  const record = await readRecord(repoRoot);
  for (const name of names) record[name] = now;
  const sorted = Object.fromEntries(Object.keys(record).sort().map((name) => [name, record[name]]));
  await writeFile(`${repoRoot}${UNSEEN_RECORD}`, `${JSON.stringify(sorted, null, 1)}\n`);
}

/** Each part's inputs that differ from those of its baseline's full run (added, changed or gone); null when no full run is recorded. */
export async function unseenChanges(repoRoot, names, now) {
  const record = await readRecord(repoRoot);
  const changes = {};
  for (const name of names) {
    const then = record[name];
    if (then === undefined) {
      changes[name] = null;
      continue;
    }
    const paths = new Set([...Object.keys(then), ...Object.keys(now)]);
    const differ = [...paths].filter((path) => then[path] !== now[path]).sort();
    if (differ.length > 0) changes[name] = differ;
  }
  return changes;
}
