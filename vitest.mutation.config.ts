// The vitest configuration StrykerJS runs (stryker.config.mjs): only the unit test files of the part
// named by POOLSCOPE_MUTATION_PART (scripts/mutation-parts.mjs), without the global setup that builds
// dist/ for the binary tests, so no mutant starts a build, a Redis, a binary or a browser.
import { defineConfig } from 'vitest/config';
import { currentPart } from './scripts/mutation-parts.mjs';

const part = currentPart() as { tests: string[]; excludeTests?: string[]; skipTests?: string[] };
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export default defineConfig({
  test: {
    include: part.tests,
    exclude: ['**/node_modules/**', ...(part.excludeTests ?? [])],
    // Every test whose name holds none of skipTests.
    ...(part.skipTests ? { testNamePattern: new RegExp(`^(?!.*(?:${part.skipTests.map(escape).join('|')}))`) } : {}),
    // One module graph for all of a run's test files, not one per file. StrykerJS starts a vitest run per
    // mutant, and vitest stops a run's worker when the run ends, so every mutant's run still loads the
    // mutated modules afresh (a static mutant, code run as its module loads, is evaluated with that mutant
    // active). What isolation cost was loading the graph again for each test file of each run: about 0.3 s
    // a file, and a mutant's tests sit in several files. The join part: 1,322 s isolated, 897 s not, every
    // mutant's status the same but one that depends on timing (docs/design.md "Mutation testing").
    isolate: false,
    testTimeout: 30000,
    hookTimeout: 60000,
  },
});
