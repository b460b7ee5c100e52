// Links this checkout's own `poolscope` command into node_modules/.bin, so `npx poolscope` in a clone
// runs bin/poolscope.js directly. Without it npx installs the project into its cache first (a rebuild,
// seconds to minutes, and a half-written cache entry if that is interrupted). Runs from `prepare`.
import { existsSync, lstatSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const binDir = join('node_modules', '.bin');
if (existsSync('node_modules')) {
  mkdirSync(binDir, { recursive: true });
  const link = join(binDir, 'poolscope');
  try {
    if (lstatSync(link)) rmSync(link);
  } catch {
    // no link yet
  }
  symlinkSync(join('..', '..', 'bin', 'poolscope.js'), link);
}
