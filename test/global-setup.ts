// Builds dist/ once per vitest run, so tests that drive the real binary (bin/poolscope.js imports
// dist/) run the code under test. A failed build does not stop the run: the unit tests still run, and
// the binary tests fail with the compiler's output, which they read through inject('buildError').
// `npm run test:unit` sets POOLSCOPE_SKIP_BUILD=1: its tests run no binary, so nothing is built.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The output of a failed `npm run build`, or null when it succeeded. */
    buildError: string | null;
  }
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export default async function setup(project: TestProject): Promise<void> {
  if (process.env.POOLSCOPE_SKIP_BUILD === '1') {
    project.provide('buildError', 'dist/ was not built for this run (POOLSCOPE_SKIP_BUILD=1)');
    return;
  }
  const buildError = await new Promise<string | null>((resolve) => {
    execFile('npm', ['run', 'build', '--silent'], { cwd: repoRoot }, (error, stdout, stderr) => {
      resolve(error === null ? null : `npm run build failed:\n${stdout}${stderr}`);
    });
  });
  project.provide('buildError', buildError);
}
