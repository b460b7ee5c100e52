// README's flag tables and its table of environment names, made from the command table, the same data
// `--help` prints (help.ts): `npm run docs:flags` writes them between their markers in README.md, and
// test/cli/help-readme.test.ts fails while README differs from what this makes.
//
// A block is `<!-- generated: KIND (npm run docs:flags) -->` … `<!-- end generated: KIND -->`, KIND one of
//   `flags COMMAND`                   every flag of COMMAND, a table per --help section;
//   `flags COMMAND --flag, COMMAND --flag …`   those flags only, each named with its command;
//   `environment`                     every environment name and the commands that read it.
import type { Command } from './command.js';
import { envName, envNameTable } from './env-names.js';
import type { FlagDef } from './flag-parser.js';
import { flagUsage, sections } from './help.js';

const HEADER = '| flag | default | env | what, and the rule of its value |\n|---|---|---|---|';

/** The table(s) of one command's flags: one per section, each after its heading in italics. */
export function commandFlagsMarkdown(command: Command): string {
  return sections(command)
    .map(([section, flags]) => {
      const title = section === undefined ? '' : `*${escapeCell(section)}*\n\n`;
      return `${title}${HEADER}\n${flags.map((flag) => flagRow(command, flag)).join('\n')}`;
    })
    .join('\n\n');
}

/** Some flags of some commands, each named `COMMAND --flag`. */
export function someFlagsMarkdown(picks: readonly { command: Command; flag: FlagDef<never> }[]): string {
  return `${HEADER}\n${picks.map(({ command, flag }) => flagRow(command, flag, `${command.name} `)).join('\n')}`;
}

/** Every environment name, the flag it stands for and the commands that read it. */
export function environmentMarkdown(commands: readonly Command[]): string {
  const rows = envNameTable(commands).map(
    (row) => `| \`${row.name}\` | \`--${row.flag}\` | ${row.commands.join(', ')} | ${row.shared ? 'shared' : 'own'} |`,
  );
  return `| name | flag | read by | |\n|---|---|---|---|\n${rows.join('\n')}`;
}

/** README with every generated block made anew from `commands`; throws naming a block it cannot make. */
export function updateReadme(readme: string, commands: readonly Command[]): string {
  const block = /(<!-- generated: ([^>]*?) \(npm run docs:flags\) -->)\n[\s\S]*?(<!-- end generated: \2 -->)/g;
  return readme.replace(block, (_whole, open: string, kind: string, close: string) => `${open}\n${makeBlock(kind, commands)}\n${close}`);
}

/** The KINDs of README's generated blocks, in order. */
export function readmeBlockKinds(readme: string): string[] {
  return [...readme.matchAll(/<!-- generated: ([^>]*?) \(npm run docs:flags\) -->/g)].map((m) => m[1]!);
}

function makeBlock(kind: string, commands: readonly Command[]): string {
  if (kind === 'environment') return environmentMarkdown(commands);
  const all = /^flags (\S+)$/.exec(kind);
  if (all !== null) return commandFlagsMarkdown(commandNamed(all[1]!, commands, kind));
  const some = /^flags (.+)$/.exec(kind);
  if (some === null) throw new Error(`README: unknown generated block ${JSON.stringify(kind)}`);
  const picks = some[1]!.split(',').map((pick) => {
    const [name, flagName] = pick.trim().split(/\s+--/);
    const command = commandNamed(name!, commands, kind);
    const flag = command.flags.find((f) => f.name === flagName);
    if (flag === undefined) throw new Error(`README block ${JSON.stringify(kind)}: ${name} has no --${flagName}`);
    return { command, flag };
  });
  return someFlagsMarkdown(picks);
}

function commandNamed(name: string, commands: readonly Command[], kind: string): Command {
  const command = commands.find((c) => c.name === name);
  if (command === undefined) throw new Error(`README block ${JSON.stringify(kind)}: no command ${name}`);
  return command;
}

function flagRow(command: Command, flag: FlagDef<never>, prefix = ''): string {
  const cells = [
    `\`${prefix}${flagUsage(flag)}\``,
    flag.defaultText === undefined ? 'none' : escapeCell(flag.defaultText),
    `\`${envName(command.name, flag)}\``,
    escapeCell(flag.summary),
  ];
  return `| ${cells.join(' | ')} |`;
}

/** A cell's text in Markdown: a `|` would end the cell, a `<word>` would be taken for HTML. */
export function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function unescapeCell(text: string): string {
  return text.replaceAll('&gt;', '>').replaceAll('&lt;', '<').replaceAll('\\|', '|');
}
