// Every process a benchmark spawns is tracked here, so nothing outlives the run: each part stops its own
// children in `finally`, and whatever is left (a part that threw, Ctrl-C) is killed when the run exits.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const running = new Set<ChildProcess>();
let hooked = false;

function killAll(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  running.clear();
}

/** Kill every tracked child when this process exits or is interrupted. Called once by run.ts. */
export function killChildrenOnExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Follow a child spawned elsewhere (startPoolscope) until it exits. */
export function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

export function spawnTracked(command: string, args: string[], options: SpawnOptions): ChildProcess {
  return track(spawn(command, args, options));
}

/**
 * Signal the child (`signal: null`: it was already asked to stop another way) and wait for its exit;
 * SIGKILL after `graceMs`.
 */
export async function stopChild(child: ChildProcess, options: { signal?: NodeJS.Signals | null; graceMs?: number } = {}): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (options.signal !== null) child.kill(options.signal ?? 'SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), options.graceMs ?? 3000);
  await exited;
  clearTimeout(force);
}

/** Collect a child's stdout and resolve with it when the child exits 0; reject with its stderr otherwise. */
export function outputOf(child: ChildProcess, what: string): Promise<string> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${what} exited with ${code ?? signal}: ${stderr.trim()}`));
    });
  });
}

/**
 * The first IPC message from `child` that `match` accepts; rejects when the child exits first or nothing
 * matching comes within `timeoutMs` (30 s by default; `what` and the child's stderr name the failure).
 */
export function childMessage<T>(
  child: ChildProcess,
  match: (message: unknown) => T | undefined,
  what: string,
  stderr: () => string,
  timeoutMs = 30_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${what} within ${timeoutMs} ms: ${stderr()}`)), timeoutMs);
    const onMessage = (message: unknown) => {
      try {
        const value = match(message);
        if (value !== undefined) finish(undefined, value);
      } catch (error) {
        finish(error as Error);
      }
    };
    const onExit = (code: number | null) => finish(new Error(`${what}: the process exited with ${code}: ${stderr()}`));
    function finish(error?: Error, value?: T) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(value!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
