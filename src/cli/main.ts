// The `poolscope` command line: picks a command from the table (command-table.ts) and returns the exit
// code (bin/poolscope.js sets it). `poolscope COMMAND --help` prints a command's flags; `poolscope --help`
// the commands. Before a command runs, the POOLSCOPE_* names of the environment it does not read are
// found (env-names.ts), for it to say so once: it never reads them.
import { readFile } from 'node:fs/promises';
import { EXIT_USAGE, type CliIo, type Command, type CommandSummary } from './command.js';
import { COMMANDS } from './command-table.js';
import { ignoredEnv } from './env-names.js';
import { commandHelpText, helpText, usageText } from './help.js';

export type { CliIo } from './command.js';

const HELP: Command = {
  name: 'help',
  usage: 'help [COMMAND]',
  summary: "print this help, or a command's (the same as COMMAND --help)",
  flags: [],
  async run(args, io) {
    const [name, ...rest] = args;
    if (name === undefined) return printHelp(io);
    const command = COMMANDS.find((c) => c.name === name);
    if (command === undefined || rest.length > 0) {
      io.stderr(`poolscope: help: unknown command ${JSON.stringify(args.join(' '))}\n${usageText(SUMMARIES)}`);
      return EXIT_USAGE;
    }
    io.stdout(commandHelpText(command));
    return 0;
  },
};

/** What the help lists: the commands, and the options that stand in for one. */
const SUMMARIES: readonly CommandSummary[] = [
  ...COMMANDS,
  HELP,
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
  if (first === HELP.name) return HELP.run(rest, io);
  const command = COMMANDS.find((c) => c.name === first);
  if (command === undefined) {
    io.stderr(`poolscope: unknown command ${JSON.stringify(first)}\n${usageText(SUMMARIES)}`);
    return EXIT_USAGE;
  }
  return command.run(rest, { ...io, ignoredEnv: ignoredEnv(command, COMMANDS, io.env) });
}

function printHelp(io: CliIo): number {
  io.stdout(helpText(SUMMARIES, COMMANDS));
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
