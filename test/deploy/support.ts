// Reading what ships beside the code (manifests, Compose file, Dockerfile) and asking the real binary
// which flags it has, for the deploy tests.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT, runPoolscope } from '../support/process.js';

export { REPO_ROOT };

/** Every document of a YAML file as plain data; throws naming the file on a parse error or warning. */
export function readYamlDocuments(relativePath: string): unknown[] {
  return parseYamlDocuments(readFileSync(join(REPO_ROOT, relativePath), 'utf8'), relativePath);
}

export function parseYamlDocuments(text: string, name: string): unknown[] {
  // `merge`: Compose files use YAML merge keys (<<: *anchor).
  const documents = parseAllDocuments(text, { merge: true, uniqueKeys: true, prettyErrors: true });
  const list = Array.isArray(documents) ? documents : [documents];
  const values: unknown[] = [];
  for (const document of list) {
    const problem = document.errors[0] ?? document.warnings[0];
    if (problem) throw new Error(`${name}: ${problem.message}`);
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) values.push(value);
  }
  return values;
}

/** The names of the `--flags` in an argument list (`--a=1`, `--b 2`), in order. */
export function flagNames(args: readonly string[]): string[] {
  return args.filter((arg) => arg.startsWith('--')).map((arg) => arg.slice(2).split('=')[0]!);
}

/** Runs `poolscope <args>` (the built binary) with no POOLSCOPE_* variable; resolves with its stdout. */
export async function binaryOutput(args: string[]): Promise<string> {
  const result = await runPoolscope(args);
  if (result.code !== 0) throw new Error(`poolscope ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
  return result.stdout;
}

/** The `--flag` names a command's --help lists. */
export async function helpFlags(command: string): Promise<Set<string>> {
  const help = await binaryOutput([command, '--help']);
  return new Set([...help.matchAll(/^ {2}--([a-z0-9-]+)/gm)].map((m) => m[1]!));
}

/** Whether `command` runs here (e.g. kubectl, docker). */
export function hasCommand(command: string, args: string[] = ['version', '--client']): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
