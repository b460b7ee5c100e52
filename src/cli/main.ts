// The `poolscope` command line: picks a command from the table below and returns the exit code
// (bin/poolscope.js sets it). Each command is one table entry; `poolscope COMMAND --help` prints its flags.
import { readFile } from 'node:fs/promises';
import { EXIT_USAGE, type CliIo, type Command } from './command.js';
import { poolsCommand } from './commands/pools.js';
import { relayCommand } from './commands/relay.js';
import { simulateCommand } from './commands/simulate.js';
import { wantsHelp } from './flag-parser.js';
import { parseServeFlags } from './flags.js';
import { helpText, usageText, type CommandSummary } from './help.js';

export type { CliIo } from './command.js';

const COMMANDS: readonly Command[] = [
  {
    name: 'serve',
    usage: 'serve [flags]',
    summary: 'run the service (flags below)',
    async run(args, io) {
      if (wantsHelp(args)) return printHelp(io);
      const parsed = parseServeFlags(args, io.env);
      if (!parsed.ok) {
        io.stderr(`poolscope: ${parsed.flag}: ${parsed.message}\n`);
        return EXIT_USAGE;
      }
      const { runServe } = await import('./serve.js');
      return runServe(parsed.config);
    },
  },
  relayCommand,
  poolsCommand,
  simulateCommand,
  {
    name: 'help',
    usage: 'help',
    summary: 'print this help',
    async run(_args, io) {
      return printHelp(io);
    },
  },
];

/** What the help lists: the commands, and the options that stand in for one. */
const SUMMARIES: readonly CommandSummary[] = [
  ...COMMANDS,
  { usage: '--help, -h', summary: 'print this help' },
  { usage: '--version', summary: 'print the version' },
];

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr(usageText(SUMMARIES));
    return EXIT_USAGE;
  }
  if (first === '--help' || first === '-h') return printHelp(io);
  if (first === '--version') {
    io.stdout(`${await readVersion()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (command === undefined) {
    io.stderr(`poolscope: unknown command ${JSON.stringify(first)}\n${usageText(SUMMARIES)}`);
    return EXIT_USAGE;
  }
  return command.run(rest, io);
}

function printHelp(io: CliIo): number {
  io.stdout(helpText(SUMMARIES));
  return 0;
}

/** The version in package.json, read on demand (no import-time I/O). */
async function readVersion(): Promise<string> {
  // This module runs from src/cli (tsx, vitest) or from dist/src/cli (the binary).
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const pkg: unknown = JSON.parse(await readFile(new URL(relative, import.meta.url), 'utf8'));
      if (isPoolscopePackage(pkg)) return pkg.version;
    } catch {
      // Not at this level: try the next one up.
    }
  }
  return 'unknown';
}

function isPoolscopePackage(pkg: unknown): pkg is { name: 'poolscope'; version: string } {
  if (typeof pkg !== 'object' || pkg === null) return false;
  const fields = pkg as Record<string, unknown>;
  return fields.name === 'poolscope' && typeof fields.version === 'string';
}
