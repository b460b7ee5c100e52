// Poll until a condition holds, with a deadline: the only way tests wait (never a bare sleep).

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  const interval = options.intervalMs ?? 20;
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
      throw new Error(`timed out after ${options.timeoutMs ?? 5000} ms waiting for ${options.message ?? 'condition'}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
