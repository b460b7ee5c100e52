// A part's committed baseline (mutation-baseline/<part>.json, StrykerJS's incremental report) kept byte for
// byte when a run judged nothing differently. StrykerJS numbers mutants and tests afresh on every run and
// writes them in its own order, so a run that reused every result would still rewrite the whole file: a
// diff of megabytes saying nothing. What a result is made of is compared instead, without the ids: each
// mutant by what identifies it (file, mutator, replacement and place, as StrykerJS's own diff keys it) and
// its status, each test by its file, name and place, and the source of every file and test file; when it
// is the same, the old bytes go back. Which tests covered a mutant, and which of two killed it
// first, vary from run to run with the tests' timing, so they are left out: either run's are true, and a
// change to a test shows in its file's source.
import { readFile, writeFile } from 'node:fs/promises';

/** The report's results without its numbering: equal for two runs that judged the same code the same way. */
export function resultEssence(report) {
  const tests = [];
  for (const [file, testFile] of Object.entries(report.testFiles ?? {})) {
    for (const test of testFile.tests) tests.push(JSON.stringify([file, test.name, test.location ?? null]));
  }
  const mutants = [];
  for (const [file, result] of Object.entries(report.files)) {
    for (const mutant of result.mutants) {
      mutants.push(
        JSON.stringify([file, mutant.mutatorName, mutant.replacement ?? null, mutant.location, mutant.status, mutant.static ?? false]),
      );
    }
  }
  const sources = [...Object.entries(report.files), ...Object.entries(report.testFiles ?? {})].map(([file, { source }]) => JSON.stringify([file, source ?? null]));
  return JSON.stringify([mutants.sort(), tests.sort(), sources.sort()]);
}

/** The baseline's bytes before a run (undefined when there is none yet). */
export async function readBaseline(path) {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** After a run: puts `before` back when the run's baseline holds the same results. Returns whether it did. */
export async function keepUnchanged(path, before) {
  if (before === undefined) return false;
  const after = await readBaseline(path);
  if (after === undefined || after === before) return false;
  if (resultEssence(JSON.parse(after)) !== resultEssence(JSON.parse(before))) return false;
  await writeFile(path, before);
  return true;
}
