// Help equals README (README "Configuration"): `poolscope COMMAND --help` and README's flag tables come from
// one flag table per command. README's generated blocks must be what `npm run docs:flags` makes now, and
// each command's --help, read back flag by flag (usage, summary, default, env name), must say what its
// README table says, row for row.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { envNameTable } from '../../src/cli/env-names.js';
import { readmeBlockKinds, unescapeCell, updateReadme } from '../../src/cli/flag-docs.js';
import { REPO_ROOT, runPoolscope } from '../support/process.js';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

interface FlagFacts {
  usage: string;
  summary: string;
  default: string;
  env: string;
}

/** The rows of README's block `flags COMMAND`, as facts. */
function readmeFlags(kind: string): FlagFacts[] {
  const start = readme.indexOf(`<!-- generated: ${kind} (npm run docs:flags) -->`);
  const end = readme.indexOf(`<!-- end generated: ${kind} -->`);
  expect(start, kind).toBeGreaterThan(-1);
  return readme
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      // Cells split on | not escaped as \|.
      const cells = line.slice(2, -2).split(/(?<!\\) \| /);
      const [usage, defaultText, env, summary] = cells.map((cell) => unescapeCell(cell.trim()));
      return { usage: usage!.replace(/^`|`$/g, ''), default: defaultText!, env: env!.replace(/^`|`$/g, ''), summary: summary! };
    });
}

/** The flags of a `--help` text, as facts: the usage line, the wrapped summary, then `default …; env …`. */
function helpFlags(help: string): FlagFacts[] {
  const facts: FlagFacts[] = [];
  const lines = help.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^ {2}--/.test(lines[i]!)) continue;
    const usage = lines[i]!.trim();
    const summary: string[] = [];
    let j = i + 1;
    while (!/; env [A-Z_]+$/.test(lines[j]!)) summary.push(lines[j++]!.trim());
    const [, defaultText, env] = /^ {6}(?:default (.*)|no default); env ([A-Z_]+)$/.exec(lines[j]!)!;
    facts.push({ usage, summary: summary.join(' '), default: defaultText ?? 'none', env: env! });
    i = j;
  }
  return facts;
}

describe("README's generated flag tables", () => {
  it('are what the flag tables make now (npm run docs:flags rewrites them)', () => {
    expect(updateReadme(readme, COMMANDS) === readme, 'README.md differs from the flag tables: run npm run docs:flags').toBe(true);
  });

  it('cover every command and the table of environment names', () => {
    const kinds = readmeBlockKinds(readme);
    for (const command of COMMANDS) expect(kinds).toContain(`flags ${command.name}`);
    expect(kinds).toContain('environment');
  });

  it('list every environment name with the commands that read it', () => {
    const start = readme.indexOf('<!-- generated: environment (npm run docs:flags) -->');
    const block = readme.slice(start, readme.indexOf('<!-- end generated: environment -->'));
    for (const row of envNameTable(COMMANDS)) {
      expect(block).toContain(`| \`${row.name}\` | \`--${row.flag}\` | ${row.commands.join(', ')} |`);
    }
  });
});

describe('each command --help says what README says', () => {
  beforeAll(() => {
    const buildError = inject('buildError');
    if (buildError !== null) throw new Error(buildError);
  });

  it.each(COMMANDS.map((command) => [command.name]))('%s', async (name) => {
    const result = await runPoolscope([name, '--help']);
    expect(result.code).toBe(0);
    const fromHelp = helpFlags(result.stdout);
    const fromReadme = readmeFlags(`flags ${name}`);
    expect(fromHelp).toHaveLength(COMMANDS.find((c) => c.name === name)!.flags.length);
    expect(fromReadme).toEqual(fromHelp);
  });

  it('the findings of the issue: relay --request-timeout-ms in README, POOLSCOPE_LOG_LEVEL in every --help of a command that logs', () => {
    expect(readmeFlags('flags relay').map((f) => f.usage)).toContain('--request-timeout-ms MS');
    for (const name of ['serve', 'relay', 'simulate']) {
      expect(readmeFlags(`flags ${name}`).find((f) => f.usage === '--log-level LEVEL')?.env).toBe('POOLSCOPE_LOG_LEVEL');
    }
  });
});
