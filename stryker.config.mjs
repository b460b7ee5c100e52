// StrykerJS over one part of poolscope at a time (scripts/mutation-parts.mjs names the parts: the files
// each mutates and the unit tests that exercise them). `npm run mutation` (scripts/mutation.mjs) runs every
// part in turn and merges their reports; `POOLSCOPE_MUTATION_PART=kube npx stryker run` runs one.
// @ts-check
import { currentPart, THRESHOLDS } from './scripts/mutation-parts.mjs';

const part = currentPart();

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: {
    configFile: 'vitest.mutation.config.ts',
    // The part's test files are chosen by the configuration above: run all of them in the dry run,
    // then, per mutant, the tests that covered it (coverageAnalysis perTest).
    related: false,
  },
  coverageAnalysis: 'perTest',
  mutate: part.mutate,
  // Two cores: one test runner per core, unless the part names more (`concurrency`: its tests wait on real
  // timers, so two runners leave the cores idle). CI has the machine to itself.
  concurrency: part.concurrency ?? 2,
  // A mutant that makes a test hang counts as detected once it runs this much past the test's own time.
  timeoutMS: part.timeoutMS ?? 10000,
  // A part run alone breaks below 90 %. `npm run mutation` judges the whole instead (the parts' mutants
  // together), so it asks each part not to break on its own score.
  // (The per-file floor, THRESHOLDS.file, is judged by scripts/mutation.mjs over the merged report.)
  thresholds: { high: THRESHOLDS.high, low: THRESHOLDS.low, break: process.env.POOLSCOPE_MUTATION_WHOLE === '1' ? null : THRESHOLDS.break },
  reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
  jsonReporter: { fileName: `reports/mutation/${part.name}/mutation.json` },
  htmlReporter: { fileName: `reports/mutation/${part.name}/mutation.html` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // The part's committed baseline (see scripts/mutation.mjs): every run, CI's too, retests only the
  // mutants whose code or tests changed since, and writes the file back.
  incrementalFile: process.env.POOLSCOPE_MUTATION_INCREMENTAL_FILE ?? `mutation-baseline/${part.name}.json`,
  // One sandbox folder per part, so two parts may run at once (each with --concurrency=1).
  tempDirName: `.stryker-tmp/${part.name}`,
  // Not needed by any part's tests: copying them into the sandbox only costs time.
  ignorePatterns: ['dist', 'reports', 'test-artifacts', 'bench', 'deploy', 'docs', 'coverage', '.tmp', '.stryker-tmp', 'mutation-baseline'],
  cleanTempDir: 'always',
};
