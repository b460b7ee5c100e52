// Capped exponential backoff with jitter, the one every source uses when it re-reads after a failure:
// 0.8 s doubling to 30 s by default (as kube-rs' DefaultBackoff and client-go's, what the Kubernetes
// source keeps), reset once the source is synced. The Redis store caps its reconnects and re-reads far
// lower (docs/design.md "The store").

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Fraction of the delay added at random, 0..1 (default 0.2). */
  jitter?: number;
  /** Random source in [0, 1) (injectable for tests). */
  random?: () => number;
  /**
   * At the cap, take the jitter off the cap instead of adding it (then clipped to the cap), so delays at
   * the cap stay spread over [cap × (1 − jitter), cap] rather than all landing on the cap (default false).
   */
  jitterBelowCap?: boolean;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private readonly jitterBelowCap: boolean;
  private attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.jitter = options.jitter ?? 0.2;
    this.random = options.random ?? Math.random;
    this.jitterBelowCap = options.jitterBelowCap ?? false;
  }

  /** The delay before the next attempt; each call doubles the base, up to the cap. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt += 1;
    const jittered = base * (1 + this.jitter * this.random());
    if (this.jitterBelowCap && jittered > this.maxMs) return Math.round(this.maxMs * (1 - this.jitter * this.random()));
    return Math.round(Math.min(this.maxMs, jittered));
  }

  /** Start over (the source is synced again). */
  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }

  /** The cap of the delays. */
  get maxDelayMs(): number {
    return this.maxMs;
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
