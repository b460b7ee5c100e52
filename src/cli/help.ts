// The text of `poolscope --help` and of the usage printed on a wrong command, built from the command
// table (main.ts) and the flag table (flag-table.ts) so neither can drift from what the parser accepts.
import { SERVE_FLAGS, envName, type FlagGroup, type FlagSpec } from './flag-table.js';

export interface CommandSummary {
  /** How the command is typed, e.g. `serve [flags]`. */
  usage: string;
  summary: string;
}

const GROUP_TITLES: Record<FlagGroup, string> = {
  general: 'General',
  storage: 'Registration storage',
  redis: 'Redis (only with --registration-storage redis)',
  mcs: 'Multi-Cluster Services (only with --pool-discovery mcs or karmada)',
  'tls-auth': 'TLS and auth',
};

/** The short form: what to type, without the flags. */
export function usageText(commands: readonly CommandSummary[]): string {
  return [...commandLines(commands), '', 'Run `poolscope --help` for the flags of serve.', ''].join('\n');
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

function describeFlag(spec: FlagSpec): string[] {
  const defaultText = spec.defaultText === undefined ? 'no default' : `default ${spec.defaultText}`;
  return [
    `  --${spec.name} ${spec.valueName}`,
    `      ${spec.summary}`,
    `      ${defaultText}; env ${envName(spec)}`,
  ];
}
