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
    testTimeout: 30000,
    hookTimeout: 60000,
  },
});
