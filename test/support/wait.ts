// Waiting in tests, the only way they wait (never a bare sleep): poll until a condition holds or an
// assertion passes, with a deadline; or keep checking that something holds throughout a period.

export interface WaitOptions {
  /** Give up after this long (default 5 s). */
  timeoutMs?: number;
  /** Time between two probes (default 10 ms). */
  intervalMs?: number;
  /** What is awaited, for the timeout's message. */
  message?: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Poll `probe` until it returns something other than `undefined` or `false`, and resolve with that. A
 * probe that throws counts as "not yet"; its last error is named in the timeout's message.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.message ?? 'condition'}${detail}`);
    }
    await pause(options.intervalMs ?? 10);
  }
}

/** Retry `check` (assertions) until it passes; at the deadline its last failure is thrown as it is. */
export async function eventually(check: () => void | Promise<void>, options: Omit<WaitOptions, 'message'> = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await pause(options.intervalMs ?? 10);
  }
}

/**
 * Run `step` (checks, or a heartbeat) every `everyMs` until `durationMs` have passed; a step that throws ends
 * it. A window that would run no check fails (a duration computed from a deadline already past, say): a
 * promise held "throughout" no time at all was never checked. Returns how many times `step` ran.
 */
export async function throughout(durationMs: number, everyMs: number, step: () => void | Promise<void>): Promise<number> {
  if (!(durationMs > 0)) throw new Error(`throughout(): a window of ${durationMs} ms would run no check`);
  const until = Date.now() + durationMs;
  let checks = 0;
  do {
    await step();
    checks += 1;
    await pause(everyMs);
  } while (Date.now() < until);
  return checks;
}

/** Run `step` now and every `everyMs` until `stop()` (which waits for the step under way); failures are ignored. */
export function repeatEvery(everyMs: number, step: () => unknown): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      await Promise.resolve()
        .then(step)
        .catch(() => undefined);
      if (running) await pause(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}
