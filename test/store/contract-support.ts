// Helpers of the store contract suite: registrations, a watch recorder, a view replayed from a snapshot
// and the events after it, and polling with a deadline (never a sleep that waits for a condition).
import { expect } from 'vitest';
import type { Registration } from '../../src/contract/index.js';
import { canonicalJson } from '../../src/store/canonical-json.js';
import type { LeaseEvent, RegistrationStore, StoreSnapshot } from '../../src/store/types.js';

export function registration(name: string, variant = 0, overrides: Partial<Registration> = {}): Registration {
  return {
    cluster_id: 'us-east-1',
    namespace: 'llm',
    name,
    model: `model-${variant}`,
    capabilities: ['chat'],
    capacity: [{ name: 'gpus', value: 8 + variant }],
    location: { region: 'us-east-1', zone: 'us-east-1a' },
    frontends: ['http://10.0.0.7:8000'],
    ...overrides,
  };
}

export const keyOf = (r: Registration) => `${r.cluster_id}/${r.namespace}/${r.name}`;

/** Polls `check` until it returns true (or a value other than false/undefined), at most `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | false | undefined> | T | false | undefined,
  { timeoutMs = 5000, intervalMs = 10, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result !== false && result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await pause(intervalMs);
  }
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

  constructor(store: RegistrationStore, position: string, private readonly onEvent?: (event: LeaseEvent) => void) {
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
 * upsert of an unknown pool version 1, a lapse only ends a known pool; positions never repeat.
 */
export class ReplayedView {
  readonly pools = new Map<string, ViewEntry>();
  private readonly seen = new Set<string>();
  applied = 0;
  lapses = 0;

  constructor(snapshot: StoreSnapshot) {
    for (const record of snapshot.records) {
      this.pools.set(record.key, { version: record.version, content: canonicalJson(record.registration) });
    }
  }

  apply(event: LeaseEvent): void {
    expect(this.seen.has(event.position), `position ${event.position} delivered twice`).toBe(false);
    this.seen.add(event.position);
    this.applied += 1;
    if (event.type === 'lapse') {
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
