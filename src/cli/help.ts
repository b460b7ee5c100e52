// The text of `poolscope --help`, of `poolscope COMMAND --help` and of the usage printed on a wrong
// command, built from the command table (command-table.ts) and each command's flag table, so none can
// drift from what the parser accepts. README's flag tables come from the same tables (flag-docs.ts).
import type { Command, CommandSummary } from './command.js';
import { envName, envNameTable } from './env-names.js';
import type { FlagDef } from './flag-parser.js';

const WIDTH = 100;
const INDENT = '      ';

/** The short form, on stderr when no command was given: what to type, and where the flags are. */
export function usageText(commands: readonly CommandSummary[]): string {
  return [...commandLines(commands), '', 'Run `poolscope COMMAND --help` for the flags of a command.', ''].join('\n');
}

/** The long form: the commands, the environment names every command shares, and `COMMAND --help`. */
export function helpText(summaries: readonly CommandSummary[], commands: readonly Command[]): string {
  const shared = envNameTable(commands).filter((row) => row.shared);
  const width = Math.max(...shared.map((row) => row.name.length));
  return [
    'poolscope: global pool discovery for model-serving pools.',
    '',
    ...commandLines(summaries),
    '',
    'Run `poolscope COMMAND --help` for the flags of a command (e.g. `poolscope serve --help`).',
    '',
    ...wrap(
      'Environment: each flag can also be set as POOLSCOPE_<COMMAND>_<FLAG>, read by that command only ' +
        '(e.g. POOLSCOPE_SERVE_LEASE_DURATION_SECS); the command line wins. These names mean the same to every ' +
        'command that reads them:',
      '',
    ),
    ...shared.map((row) => `  ${row.name.padEnd(width)}  --${row.flag} of ${row.commands.join(', ')}`),
    ...wrap('A POOLSCOPE_* name of another command, or an old POOLSCOPE_<FLAG> name, is never read: the command says so once at start.', ''),
    '',
  ].join('\n');
}

/** The help of one command: what it does, how to type it, its flags (by section), and its notes. */
export function commandHelpText(command: Command): string {
  const lines = [
    `poolscope ${command.usage}: ${command.summary}`,
    '',
    'Flags: --flag VALUE or --flag=VALUE (a value starting with "-" only as --flag=VALUE); a switch alone',
    'is on, or --switch=true|false|1|0. Each flag can also come from its env name below; the command line wins.',
  ];
  for (const [section, flags] of sections(command)) {
    lines.push('');
    if (section !== undefined) lines.push(`${section}:`);
    for (const flag of flags) lines.push(...describeFlag(command.name, flag));
  }
  if (command.notes && command.notes.length > 0) lines.push('', ...command.notes);
  lines.push('');
  return lines.join('\n');
}

/** The flags of a command grouped by section, sections in the order their first flag comes. */
export function sections(command: Command): [string | undefined, FlagDef<never>[]][] {
  const grouped = new Map<string | undefined, FlagDef<never>[]>();
  for (const flag of command.flags) {
    const section = command.section?.(flag);
    grouped.set(section, [...(grouped.get(section) ?? []), flag]);
  }
  return [...grouped];
}

/** How a flag is typed: `--output, -o FORMAT`, `--watch, -w`. */
export function flagUsage(flag: FlagDef<never>): string {
  const short = flag.short ? `, -${flag.short}` : '';
  const value = flag.valueName === undefined ? '' : ` ${flag.valueName}`;
  return `--${flag.name}${short}${value}`;
}

export function defaultOf(flag: FlagDef<never>): string {
  return flag.defaultText === undefined ? 'no default' : `default ${flag.defaultText}`;
}

function describeFlag(command: string, flag: FlagDef<never>): string[] {
  return [`  ${flagUsage(flag)}`, ...wrap(flag.summary, INDENT), `${INDENT}${defaultOf(flag)}; env ${envName(command, flag)}`];
}

function commandLines(commands: readonly CommandSummary[]): string[] {
  const width = Math.max(...commands.map((c) => c.usage.length));
  return ['Usage:', ...commands.map((c) => `  poolscope ${c.usage.padEnd(width)}  ${c.summary}`)];
}

/** Words on lines of at most WIDTH characters (a longer word gets a line of its own), each indented. */
function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(indent + line);
  return lines;
}
