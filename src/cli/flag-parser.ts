// The strict flag reading every command shares (docs/contract.md §6): `--flag VALUE` or `--flag=VALUE`, a value
// starting with '-' only in the `=` form, a flag never swallowing the next flag, no empty values, each
// flag at most once, and each flag's environment name (env-names.ts) under the command line. Each command
// keeps its own table of flags (flag-table.ts for serve, commands/*-flags.ts for the others) and the
// rules between its flags; only the reading lives here.
import { envName } from './env-names.js';

/** One flag of a command: how it is typed and the rule its value must meet. */
export interface FlagDef<Draft> {
  /** Without the leading dashes, e.g. `lease-duration-secs`. */
  name: string;
  /** A one-letter alias typed with one dash, e.g. `o` for `-o json`. */
  short?: string;
  /** Placeholder shown by `--help`, e.g. `SECS`; a switch (true or false) has none. */
  valueName: string | undefined;
  /** What the flag does and the rule its value must meet: `--help` and README's tables print it. */
  summary: string;
  /** The default as `--help` shows it; undefined when there is none. */
  defaultText: string | undefined;
  /**
   * The environment name, when it is not the command's own `POOLSCOPE_<COMMAND>_<FLAG>`: a shared name
   * (`sharedEnvName`, for what means the same to every command) or another command's (`commandEnvName`,
   * for a command that follows that one's configuration). See env-names.ts.
   */
  env?: string;
  /**
   * May be given more than once (`--router a=… --router b=…`): `apply` runs once per value, in order. Its
   * environment variable holds the values separated by whitespace (no value of such a flag holds any).
   */
  repeatable?: boolean;
  /**
   * Validates a non-empty value and writes it into `draft`; returns the broken rule, if any. A switch
   * receives `true` or `false`.
   */
  apply(value: string, draft: Draft): string | undefined;
}

export interface Refusal {
  ok: false;
  /** The flag as typed (`--lease-duration-secs`) or the argument that is no flag. */
  flag: string;
  message: string;
}

export type FlagsResult<Draft, Spec> =
  | { ok: true; draft: Draft; /** Where each value that was set came from: '' (command line) or ` (from ENV)`. */ origins: Map<Spec, string> }
  | Refusal;

export interface ParseFlagsOptions<Draft, Spec extends FlagDef<Draft>> {
  /** The command's name: it scopes the environment names and points refusals at its `--help`. */
  command: string;
  flags: readonly Spec[];
  /** Filled in place: start from the command's defaults. */
  draft: Draft;
  env: Record<string, string | undefined>;
}

/** What a switch accepts, on the command line (`--watch=0`) and in the environment alike. */
const SWITCH_VALUES: Record<string, 'true' | 'false'> = { true: 'true', '1': 'true', false: 'false', '0': 'false' };

/**
 * Reads `argv` and the env variables against `flags` into `draft`. A flag on the command line wins over
 * its env variable; only the value that wins is validated. Flags are applied in table order, so a flag's
 * `apply` may read what an earlier one wrote.
 */
export function parseFlags<Draft, Spec extends FlagDef<Draft>>(
  argv: readonly string[],
  options: ParseFlagsOptions<Draft, Spec>,
): FlagsResult<Draft, Spec> {
  const commandLine = readCommandLine(argv, options);
  if (!(commandLine instanceof Map)) return commandLine;
  const origins = new Map<Spec, string>();
  for (const spec of options.flags) {
    const name = envName(options.command, spec);
    const fromArgv = commandLine.get(spec);
    const fromEnv = options.env[name];
    const raws = fromArgv ?? (fromEnv === undefined ? undefined : spec.repeatable && fromEnv.trim() !== '' ? fromEnv.trim().split(/\s+/) : [fromEnv]);
    if (raws === undefined) continue;
    const origin = fromArgv === undefined ? ` (from ${name})` : '';
    origins.set(spec, origin);
    for (const raw of raws) {
      if (raw === '') return refuse(spec.name, `must not be empty${origin}`);
      let value = raw;
      if (spec.valueName === undefined) {
        const switched = SWITCH_VALUES[raw];
        if (switched === undefined) return refuse(spec.name, `is a switch: true, false, 1 or 0 (got ${quote(raw)})${origin}`);
        value = switched;
      }
      const broken = spec.apply(value, options.draft);
      if (broken !== undefined) return refuse(spec.name, broken + origin);
    }
  }
  return { ok: true, draft: options.draft, origins };
}

/** `--help` or `-h` anywhere: a value never starts with '-' in the separate form, so it is always the flag. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** The values given on the command line, or the first malformed argument. */
function readCommandLine<Draft, Spec extends FlagDef<Draft>>(
  argv: readonly string[],
  options: ParseFlagsOptions<Draft, Spec>,
): Map<Spec, string[]> | Refusal {
  const byName = new Map(options.flags.map((spec) => [spec.name, spec]));
  const byShort = new Map(options.flags.filter((spec) => spec.short).map((spec) => [spec.short!, spec]));
  const unknown = `unknown flag (poolscope ${options.command} --help lists the flags)`;
  const values = new Map<Spec, string[]>();
  const add = (spec: Spec, value: string) => values.set(spec, [...(values.get(spec) ?? []), value]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    let spec: Spec | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      spec = byName.get(name);
      if (spec === undefined) return refuseRaw(`--${name}`, unknown);
      if (eq !== -1) inline = arg.slice(eq + 1);
    } else if (arg.startsWith('-')) {
      const eq = arg.indexOf('=');
      const short = eq === -1 ? arg.slice(1) : arg.slice(1, eq);
      spec = byShort.get(short);
      if (spec === undefined) return refuseRaw(arg, unknown);
      if (eq !== -1) inline = arg.slice(eq + 1);
    } else {
      return refuseRaw(arg, `unexpected argument: ${options.command} takes only --flags`);
    }
    if (values.has(spec) && !spec.repeatable) return refuse(spec.name, 'given more than once');
    if (spec.valueName === undefined) {
      // A switch alone is on; `--switch=false` (or 0) says off, checked with the environment's values.
      add(spec, inline ?? 'true');
      continue;
    }
    if (inline !== undefined) {
      add(spec, inline);
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined) return refuse(spec.name, 'needs a value');
    // Never take the next flag as this one's value: a forgotten value must not silently eat a flag.
    if (next.startsWith('-')) {
      return refuse(spec.name, `needs a value (a value starting with '-' must be written --${spec.name}=VALUE)`);
    }
    add(spec, next);
    i++;
  }
  return values;
}

export function refuse(name: string, message: string): Refusal {
  return { ok: false, flag: `--${name}`, message };
}

/** For an argument that is not a known flag: it is echoed, so escape anything that would break the line. */
function refuseRaw(arg: string, message: string): Refusal {
  const printable = /^[\x21-\x7e]*$/.test(arg) && arg !== '' ? arg : quote(arg);
  return { ok: false, flag: printable, message };
}

/** JSON quoting keeps a value with a newline or control character on the refusal's one line. */
export function quote(value: string): string {
  return JSON.stringify(value);
}
