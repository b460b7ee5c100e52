// Helpers of the store contract suite: registrations, a watch recorder, a view replayed from a snapshot
// and the events after it, and polling with a deadline (never a sleep that waits for a condition).
import { expect } from 'vitest';
import type { Registration } from '../../src/contract/index.js';
import { canonicalJson } from '../../src/store/canonical-json.js';
import type { LeaseEvent, LeaseReader, StoreSnapshot } from '../../src/store/types.js';
import { registration as sharedRegistration } from '../support/registration.js';
import { waitFor } from '../support/wait.js';

/** The registration tests send (test/support/registration.ts), named `name`, its content varied by `variant`. */
export function registration(name: string, variant = 0, overrides: Partial<Registration> = {}): Registration {
  const content = { model: `model-${variant}`, capabilities: ['chat'], capacity: [{ name: 'gpus', value: 8 + variant }], relay: undefined };
  return sharedRegistration({ name, ...content, ...overrides });
}

export const keyOf = (r: Registration) => `${r.cluster_id}/${r.namespace}/${r.name}`;

/** waitFor (test/support/wait.ts) with the suite's `what`: polls `check` until it returns a value other than false/undefined. */
export function eventually<T>(
  check: () => Promise<T | false | undefined> | T | false | undefined,
  { timeoutMs = 5000, intervalMs = 10, what = 'condition' } = {},
): Promise<T> {
  return waitFor(check, { timeoutMs, intervalMs, message: what });
}

/** A pause between two steps of a test that drives time forward (not a wait for a condition). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Follows store.watch(position) in the background and keeps every event. */
export class WatchRecorder {
  readonly events: LeaseEvent[] = [];
  error: unknown;
  ended = false;
  private readonly controller = new AbortController();
  readonly done: Promise<void>;

  constructor(store: LeaseReader, position: string, private readonly onEvent?: (event: LeaseEvent) => void) {
    this.done = (async () => {
      try {
        for await (const event of store.watch(position, this.controller.signal)) {
          this.events.push(event);
          this.onEvent?.(event);
        }
      } catch (error) {
        this.error = error;
      } finally {
        this.ended = true;
      }
    })();
  }

  /** Waits until `predicate(events)` holds; fails at once if the watch failed. */
  until(predicate: (events: LeaseEvent[]) => boolean, what = 'the watch events', timeoutMs = 5000): Promise<LeaseEvent[]> {
    return eventually(
      () => {
        if (this.error !== undefined) throw this.error;
        return predicate(this.events) ? this.events : false;
      },
      { timeoutMs, what },
    );
  }

  /** Waits for an upsert of `key` (used as a marker: every earlier change has been delivered). */
  untilUpsertOf(key: string): Promise<LeaseEvent[]> {
    return this.until((events) => events.some((e) => e.type === 'upsert' && e.record.key === key), `an upsert of ${key}`);
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.done;
  }
}

interface ViewEntry {
  version: number;
  content: string;
}

/**
 * What a replica knows: a snapshot plus every event after it. Checks each event against what it knows,
 * so a missed or doubled event fails at once: an upsert of a known pool carries the next version, an
 * upsert of an unknown pool version 1, a lapse only ends a known pool; positions never repeat. One
 * exception: a snapshot leaves out a lease whose deadline had passed by its clock, swept or not, so the
 * lapse the log then carries for it (once, dated no later than the snapshot) ends a pool the view never held.
 */
export class ReplayedView {
  readonly pools = new Map<string, ViewEntry>();
  private readonly seen = new Set<string>();
  /** The snapshot's clock: a lease it left out as run out had its deadline at or before it. */
  private readonly snapshotNowMs: number;
  /** Pools the snapshot left out as run out whose lapse has arrived. */
  private readonly lapsedUnseen = new Set<string>();
  applied = 0;
  lapses = 0;

  constructor(snapshot: StoreSnapshot) {
    this.snapshotNowMs = snapshot.nowMs;
    for (const record of snapshot.records) {
      this.pools.set(record.key, { version: record.version, content: canonicalJson(record.registration) });
    }
  }

  apply(event: LeaseEvent): void {
    expect(this.seen.has(event.position), `position ${event.position} delivered twice`).toBe(false);
    this.seen.add(event.position);
    this.applied += 1;
    if (event.type === 'lapse') {
      if (!this.pools.has(event.key) && event.atMs <= this.snapshotNowMs && !this.lapsedUnseen.has(event.key)) {
        this.lapsedUnseen.add(event.key);
        return;
      }
      expect(this.pools.has(event.key), `lapse of ${event.key}, which is not live`).toBe(true);
      this.pools.delete(event.key);
      this.lapses += 1;
      return;
    }
    const { key, version, registration } = event.record;
    const expected = (this.pools.get(key)?.version ?? 0) + 1;
    expect(version, `version of ${key} at ${event.position}`).toBe(expected);
    this.pools.set(key, { version, content: canonicalJson(registration) });
  }

  static of(snapshot: StoreSnapshot): Map<string, ViewEntry> {
    return new ReplayedView(snapshot).pools;
  }
}
