// The text of `poolscope --help` and of the usage printed on a wrong command, built from the command
// table (main.ts) and the flag table (flag-table.ts) so neither can drift from what the parser accepts.
import { envName, type FlagDef } from './flag-parser.js';
import { SERVE_FLAGS, type FlagGroup } from './flag-table.js';

export interface CommandSummary {
  /** How the command is typed, e.g. `serve [flags]`. */
  usage: string;
  summary: string;
}

const GROUP_TITLES: Record<FlagGroup, string> = {
  general: 'General',
  storage: 'Registration storage',
  redis: 'Redis (only with --registration-storage redis)',
  regions: 'Regions, one Redis each (docs/contract.md §7; --region and --regions-file together, storage then redis)',
  mcs: 'Multi-Cluster Services (only with --pool-discovery mcs or karmada)',
  'tls-auth': 'TLS and auth',
};

/** The short form: what to type, without the flags. */
export function usageText(commands: readonly CommandSummary[]): string {
  return [...commandLines(commands), '', 'Run `poolscope --help` for the flags of serve, `poolscope COMMAND --help` for those of another command.', ''].join('\n');
}

/** The long form: commands, then every flag of serve by group with its default and env variable. */
export function helpText(commands: readonly CommandSummary[]): string {
  const lines = [
    'poolscope: global pool discovery for model-serving pools.',
    '',
    ...commandLines(commands),
    '',
    'Flags of serve: --flag VALUE or --flag=VALUE (a value starting with "-" only as --flag=VALUE).',
    'Each flag can also come from its env variable; the command line wins.',
  ];
  for (const group of Object.keys(GROUP_TITLES) as FlagGroup[]) {
    lines.push('', `${GROUP_TITLES[group]}:`);
    for (const spec of SERVE_FLAGS.filter((s) => s.group === group)) lines.push(...describeFlag(spec));
  }
  lines.push('');
  return lines.join('\n');
}

function commandLines(commands: readonly CommandSummary[]): string[] {
  const width = Math.max(...commands.map((c) => c.usage.length));
  return ['Usage:', ...commands.map((c) => `  poolscope ${c.usage.padEnd(width)}  ${c.summary}`)];
}

/** The help of one command other than serve: what it does, how to type it, and its flags. */
export function commandHelpText(command: {
  usage: string;
  summary: string;
  flags: readonly FlagDef<never>[];
  /** Lines printed after the flags (examples). */
  notes?: readonly string[];
}): string {
  const lines = [
    `poolscope ${command.usage}: ${command.summary}`,
    '',
    'Flags: --flag VALUE or --flag=VALUE (a value starting with "-" only as --flag=VALUE).',
    'Each flag can also come from its env variable; the command line wins.',
    '',
  ];
  for (const spec of command.flags) lines.push(...describeFlag(spec));
  if (command.notes && command.notes.length > 0) lines.push('', ...command.notes);
  lines.push('');
  return lines.join('\n');
}

function describeFlag(spec: FlagDef<never>): string[] {
  const defaultText = spec.defaultText === undefined ? 'no default' : `default ${spec.defaultText}`;
  const short = spec.short ? `, -${spec.short}` : '';
  const value = spec.valueName === undefined ? '' : ` ${spec.valueName}`;
  return [
    `  --${spec.name}${short}${value}`,
    `      ${spec.summary}`,
    `      ${defaultText}; env ${envName(spec)}`,
  ];
}
