// The environment names of every command's flags (docs/contract.md §6), chosen so that no name means two
// things: a pod whose containers share one env block (serve, a relay sidecar, a router) must never have a
// value meant for one command read by another.
//
// - A flag of one command is `POOLSCOPE_<COMMAND>_<FLAG>` (`POOLSCOPE_RELAY_MODEL`, `POOLSCOPE_POOLS_MODEL`,
//   `POOLSCOPE_SERVE_LEASE_DURATION_SECS`), read by that command only.
// - A shared name, `POOLSCOPE_<FLAG>`, only for what means the same to every command that reads it: how a
//   client reaches the replicas (`POOLSCOPE_SERVERS`, `POOLSCOPE_TOKEN_FILE`, `POOLSCOPE_CA_FILE`,
//   `POOLSCOPE_CERT_FILE`, `POOLSCOPE_KEY_FILE`) and `POOLSCOPE_LOG_LEVEL`.
// - A command that follows another's configuration (one run beside it in the same container) may read
//   that command's name for the same flag: its table entry says `env: commandEnvName('serve', 'listen')`.
//
// A POOLSCOPE_* name set in the environment that the running command does not read (another command's,
// or an old `POOLSCOPE_<FLAG>` name of a command's own flag) is never obeyed: `ignoredEnv` lists it, and
// the command says so once at start.

/** What this module reads of a command: its name and its flags' names. */
export interface CommandFlags {
  name: string;
  flags: readonly { name: string; env?: string }[];
}

export const ENV_PREFIX = 'POOLSCOPE_';

/** `servers` → `POOLSCOPE_SERVERS`: a name every command that reads it reads in the same sense. */
export function sharedEnvName(flag: string): string {
  return `${ENV_PREFIX}${upper(flag)}`;
}

/** `relay`, `model` → `POOLSCOPE_RELAY_MODEL`. */
export function commandEnvName(command: string, flag: string): string {
  return `${ENV_PREFIX}${upper(command)}_${upper(flag)}`;
}

/** The name a command reads a flag from. */
export function envName(command: string, flag: { name: string; env?: string }): string {
  return flag.env ?? commandEnvName(command, flag.name);
}

/** The flag of `command` that reads `name`, if any. */
export function flagOfEnvName(command: CommandFlags, name: string): string | undefined {
  return command.flags.find((flag) => envName(command.name, flag) === name)?.name;
}

/** Whether the flag reads a shared name (`POOLSCOPE_<FLAG>`). */
export function isShared(command: string, flag: { name: string; env?: string }): boolean {
  return envName(command, flag) === sharedEnvName(flag.name);
}

/** A name set in the environment that the command does not read, and why. */
export interface IgnoredEnv {
  name: string;
  /** e.g. `read by relay`, `an old name: pools reads POOLSCOPE_POOLS_MODEL`. */
  why: string;
  /** When it is the old name of one of the command's own flags: that flag, and the name it reads now. */
  insteadOf?: { flag: string; name: string };
}

/**
 * The POOLSCOPE_* names set in `env` that `command` does not read, sorted: names other commands read
 * (never a shared one: it means the same everywhere, so a command that does not need it is not misled),
 * and the old `POOLSCOPE_<FLAG>` names of any command's flag. Other POOLSCOPE_* names (a typo, a tool's
 * own setting) are not a name of any command, so they are left alone.
 */
export function ignoredEnv(command: CommandFlags, commands: readonly CommandFlags[], env: Record<string, string | undefined>): IgnoredEnv[] {
  const own = new Set(command.flags.map((flag) => envName(command.name, flag)));
  const ignored: IgnoredEnv[] = [];
  for (const name of Object.keys(env).sort()) {
    if (env[name] === undefined || !name.startsWith(ENV_PREFIX) || own.has(name)) continue;
    const readers = commands.filter((other) => other.flags.some((flag) => envName(other.name, flag) === name));
    if (readers.length > 0) {
      const shared = readers.some((other) => other.flags.some((flag) => envName(other.name, flag) === name && isShared(other.name, flag)));
      if (!shared) ignored.push({ name, why: `read by ${readers.map((other) => other.name).join(', ')}` });
      continue;
    }
    const ownFlag = command.flags.find((flag) => sharedEnvName(flag.name) === name);
    if (ownFlag !== undefined) {
      const now = envName(command.name, ownFlag);
      ignored.push({ name, why: `an old name: ${command.name} reads ${now}`, insteadOf: { flag: ownFlag.name, name: now } });
      continue;
    }
    const owner = commands.find((other) => other.flags.some((flag) => sharedEnvName(flag.name) === name));
    if (owner !== undefined) {
      const flag = owner.flags.find((f) => sharedEnvName(f.name) === name)!;
      ignored.push({ name, why: `an old name: ${owner.name} reads ${envName(owner.name, flag)}` });
    }
  }
  return ignored;
}

/** One line naming every ignored name and why, e.g. for stderr. */
export function describeIgnoredEnv(command: string, ignored: readonly IgnoredEnv[]): string {
  return `ignoring environment names ${command} does not read: ${ignored.map((entry) => `${entry.name} (${entry.why})`).join(', ')}`;
}

/** Every environment name of `commands` with the commands that read it, sorted by name. */
export function envNameTable(commands: readonly CommandFlags[]): { name: string; flag: string; commands: string[]; shared: boolean }[] {
  const rows = new Map<string, { name: string; flag: string; commands: string[]; shared: boolean }>();
  for (const command of commands) {
    for (const flag of command.flags) {
      const name = envName(command.name, flag);
      const row = rows.get(name) ?? { name, flag: flag.name, commands: [], shared: isShared(command.name, flag) };
      if (!row.commands.includes(command.name)) row.commands.push(command.name);
      rows.set(name, row);
    }
  }
  return [...rows.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function upper(name: string): string {
  return name.toUpperCase().replaceAll('-', '_');
}
