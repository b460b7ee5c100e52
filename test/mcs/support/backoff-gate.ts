// The slice source's backoff wait, handed to the test: every delay the source asks for is recorded
// (so the test checks 0.8 s doubling to 30 s and the reset without waiting that long), and while the
// gate is held the source stays in its backoff, so the test can look at the service in that state.

/** A real pause between attempts while the gate is open, so a failing loop never spins. */
const OPEN_GATE_PAUSE_MS = 2;

export class BackoffGate {
  /** The delays the source asked for, in order. */
  readonly delays: number[] = [];
  private holding = false;
  private readonly waiters = new Set<() => void>();

  /** The `backoff.sleep` of SliceSourceOptions. */
  readonly sleep = (ms: number, signal: AbortSignal): Promise<void> => {
    this.delays.push(ms);
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.holding ? undefined : setTimeout(done, OPEN_GATE_PAUSE_MS);
      if (this.holding) this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  };

  /** From now on the source waits in its backoff until `step()` or `release()`. */
  hold(): void {
    this.holding = true;
  }

  /** Let the waiting attempt go on; the next backoff is held again. */
  step(): void {
    for (const done of [...this.waiters]) done();
  }

  /** Let everything go on, and stop holding. */
  release(): void {
    this.holding = false;
    this.step();
  }

  /** How many attempts wait in the gate right now. */
  get waiting(): number {
    return this.waiters.size;
  }
}
