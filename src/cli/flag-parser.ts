// The strict flag reading every command shares (docs/contract.md §6): `--flag VALUE` or `--flag=VALUE`, a value
// starting with '-' only in the `=` form, a flag never swallowing the next flag, no empty values, each
// flag at most once, and each flag's POOLSCOPE_<FLAG> env variable under the command line. Each command
// keeps its own table of flags (flag-table.ts for serve, commands/*-flags.ts for the others) and the
// rules between its flags; only the reading lives here.

/** One flag of a command: how it is typed and the rule its value must meet. */
export interface FlagDef<Draft> {
  /** Without the leading dashes, e.g. `lease-duration-secs`. */
  name: string;
  /** A one-letter alias typed with one dash, e.g. `o` for `-o json`. */
  short?: string;
  /** Placeholder shown by `--help`, e.g. `SECS`; a switch (no value) has none. */
  valueName: string | undefined;
  summary: string;
  /** The default as `--help` shows it; undefined when there is none. */
  defaultText: string | undefined;
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
  /** The command's name, for refusals that point at its `--help`. */
  command: string;
  flags: readonly Spec[];
  /** Filled in place: start from the command's defaults. */
  draft: Draft;
  env: Record<string, string | undefined>;
}

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
    const fromArgv = commandLine.get(spec);
    const fromEnv = options.env[envName(spec)];
    const value = fromArgv ?? fromEnv;
    if (value === undefined) continue;
    const origin = fromArgv === undefined ? ` (from ${envName(spec)})` : '';
    origins.set(spec, origin);
    if (value === '') return refuse(spec.name, `must not be empty${origin}`);
    if (spec.valueName === undefined && value !== 'true' && value !== 'false') {
      return refuse(spec.name, `takes no value (got ${quote(value)})${origin}`);
    }
    const broken = spec.apply(value, options.draft);
    if (broken !== undefined) return refuse(spec.name, broken + origin);
  }
  return { ok: true, draft: options.draft, origins };
}

/** `--help` or `-h` anywhere: a value never starts with '-' in the separate form, so it is always the flag. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** `lease-duration-secs` → `POOLSCOPE_LEASE_DURATION_SECS`. */
export function envName(spec: Pick<FlagDef<unknown>, 'name'>): string {
  return `POOLSCOPE_${spec.name.toUpperCase().replaceAll('-', '_')}`;
}

/** The values given on the command line, or the first malformed argument. */
function readCommandLine<Draft, Spec extends FlagDef<Draft>>(
  argv: readonly string[],
  options: ParseFlagsOptions<Draft, Spec>,
): Map<Spec, string> | Refusal {
  const byName = new Map(options.flags.map((spec) => [spec.name, spec]));
  const byShort = new Map(options.flags.filter((spec) => spec.short).map((spec) => [spec.short!, spec]));
  const unknown = `unknown flag (poolscope ${options.command} --help lists the flags)`;
  const values = new Map<Spec, string>();
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
    if (values.has(spec)) return refuse(spec.name, 'given more than once');
    if (spec.valueName === undefined) {
      if (inline !== undefined) return refuse(spec.name, `takes no value (got ${quote(inline)})`);
      values.set(spec, 'true');
      continue;
    }
    if (inline !== undefined) {
      values.set(spec, inline);
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined) return refuse(spec.name, 'needs a value');
    // Never take the next flag as this one's value: a forgotten value must not silently eat a flag.
    if (next.startsWith('-')) {
      return refuse(spec.name, `needs a value (a value starting with '-' must be written --${spec.name}=VALUE)`);
    }
    values.set(spec, next);
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
