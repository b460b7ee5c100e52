// README's flag tables and environment names, from the flag tables of src/cli (src/cli/flag-docs.ts):
//   npm run docs:flags            rewrites every generated block of README.md
//   npm run docs:flags -- --check exits 1, naming the blocks, when README.md differs from what it makes
// test/cli/help-readme.test.ts fails while README.md differs, so run it after changing a flag or a command.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../src/cli/command-table.ts';
import { readmeBlockKinds, updateReadme } from '../src/cli/flag-docs.ts';

const README = join(dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const before = readFileSync(README, 'utf8');
const after = updateReadme(before, COMMANDS);
if (process.argv.includes('--check')) {
  if (after !== before) {
    console.error(`README.md: the generated blocks (${readmeBlockKinds(before).join('; ')}) differ from the flag tables: run npm run docs:flags`);
    process.exit(1);
  }
} else if (after !== before) {
  writeFileSync(README, after);
  console.error(`README.md: rewrote ${readmeBlockKinds(after).length} generated blocks`);
}
