// Capped exponential backoff with jitter, the one every source uses when it re-reads after a failure:
// 0.8 s doubling to 30 s (as kube-rs' DefaultBackoff and client-go's), reset once the source is synced.

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Fraction of the delay added at random, 0..1 (default 0.2). */
  jitter?: number;
  /** Random source in [0, 1) (injectable for tests). */
  random?: () => number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.jitter = options.jitter ?? 0.2;
    this.random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call doubles the base, up to the cap. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt += 1;
    return Math.round(Math.min(this.maxMs, base * (1 + this.jitter * this.random())));
  }

  /** Start over (the source is synced again). */
  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}

/** A delay that ends early when `signal` aborts. Resolves either way. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
