// The in-process RegistrationStore, for one replica (the embedded default). It forgets every lease on
// restart, which is why the service reports `complete: false` for one lease after start.
import { randomUUID } from 'node:crypto';
import { poolKey, type PoolKey, type Registration, type RouterRegistration } from '../contract/index.js';
import { canonicalJson } from './canonical-json.js';
import { MemoryChangeLog } from './memory-change-log.js';
import type { DueLapse, HeartbeatResult, LeaseEvent, LeaseRecord, RegistrationStore, StoreSnapshot, SweepResult } from './types.js';
import { PositionLostError, StoreUnavailableError } from './types.js';

export const DEFAULT_CHANGE_LOG_CAP = 10_000;

export interface MemoryStoreOptions {
  leaseMs: number;
  /** The one clock every lease is judged on, in ms. Default: monotonic (not the wall clock, which jumps). */
  now?: () => number;
  /** Events kept for watchers that fall behind (default 10,000). */
  changeLogCap?: number;
}

interface HeldLease<R> {
  record: LeaseRecord<R>;
  /** canonicalJson(registration): a renewal that changes nothing logs nothing. */
  content: string;
}

export function createMemoryStore(options: MemoryStoreOptions): RegistrationStore {
  return new MemoryStore<Registration>(options, poolKey);
}

/** The router leases of one replica (docs/contract.md §10), keyed by the router's id. */
export function createMemoryRouterStore(options: MemoryStoreOptions): RegistrationStore<RouterRegistration> {
  return new MemoryStore<RouterRegistration>(options, (router) => router.id);
}

// Whole milliseconds, as Redis's TIME gives them: every deadline and time a store reports is an integer
// (docs/contract.md §5: `/debug/pools` shows `lease_deadline_ms` in whole ms). Still monotonic.
const monotonicNow = () => Math.floor(performance.timeOrigin + performance.now());

class MemoryStore<R> implements RegistrationStore<R> {
  readonly kind = 'memory' as const;
  readonly forgetsOnRestart = true;
  private readonly leases = new Map<PoolKey, HeldLease<R>>();
  private readonly log: MemoryChangeLog<R>;
  private readonly leaseMs: number;
  private readonly now: () => number;
  private closed = false;
  /** One per instance: the memory store's data lives as long as the process. */
  private readonly epoch = randomUUID();

  constructor(
    options: MemoryStoreOptions,
    private readonly keyOf: (registration: R) => string,
  ) {
    if (!(options.leaseMs > 0)) throw new RangeError(`leaseMs must be positive, got ${options.leaseMs}`);
    this.leaseMs = options.leaseMs;
    this.now = options.now ?? monotonicNow;
    this.log = new MemoryChangeLog<R>({ cap: options.changeLogCap ?? DEFAULT_CHANGE_LOG_CAP });
  }

  async heartbeat(registration: R, canonical?: string, knownVersion = 0): Promise<HeartbeatResult> {
    this.assertOpen();
    const key = this.keyOf(registration);
    const nowMs = this.now();
    const content = canonical ?? canonicalJson(registration);
    let held = this.leases.get(key);
    if (held && held.record.deadlineMs <= nowMs) {
      // Due but not swept yet: the log must still say it lapsed before it says it is back.
      this.lapse(key, held);
      held = undefined;
    }
    // The record this heartbeat merely renews, if its content is unchanged.
    const renewed = held !== undefined && held.content === content ? held.record : undefined;
    const changed = renewed === undefined;
    const record: LeaseRecord<R> = {
      key,
      registration: renewed ? renewed.registration : (JSON.parse(content) as R),
      renewedAtMs: nowMs,
      leaseMs: this.leaseMs,
      deadlineMs: nowMs + this.leaseMs,
      version: renewed ? renewed.version : Math.max(held?.record.version ?? 0, knownVersion) + 1,
      changedAtMs: renewed ? renewed.changedAtMs : nowMs,
    };
    this.leases.set(key, { record, content });
    if (changed) this.log.append({ type: 'upsert', record: structuredClone(record) });
    return { key, leaseMs: this.leaseMs, changed };
  }

  async snapshot(): Promise<StoreSnapshot<R>> {
    this.assertOpen();
    const nowMs = this.now();
    // A lease past its deadline is lapsed for every reader, swept or not (its lapse follows in the log).
    const records = [...this.leases.values()]
      .filter((held) => held.record.deadlineMs > nowMs)
      .map((held) => structuredClone(held.record));
    return { records, position: this.log.position, nowMs, epoch: this.epoch };
  }

  async *watch(position: string, signal: AbortSignal, epoch?: string, reached?: () => Promise<void>): AsyncGenerator<LeaseEvent<R>, void, undefined> {
    this.assertOpen();
    // A position read in another lifetime of the store (before a restart) names nothing in this log.
    if (epoch !== undefined && epoch !== this.epoch) throw new PositionLostError(position);
    yield* this.log.follow(position, signal, reached);
  }

  async dueLapses(graceMs = 0): Promise<DueLapse[]> {
    this.assertOpen();
    if (!(graceMs >= 0 && Number.isFinite(graceMs))) throw new RangeError(`graceMs must be a finite number >= 0, got ${graceMs}`);
    const cutoff = this.now() - graceMs;
    const due: DueLapse[] = [];
    for (const [key, { record }] of this.leases) if (record.deadlineMs <= cutoff) due.push({ key, atMs: record.deadlineMs });
    return due.sort((a, b) => a.atMs - b.atMs);
  }

  async sweep(): Promise<SweepResult> {
    this.assertOpen();
    const nowMs = this.now();
    let lapsed = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, held] of this.leases) {
      if (held.record.deadlineMs <= nowMs) {
        this.lapse(key, held);
        lapsed += 1;
      } else {
        next = Math.min(next, held.record.deadlineMs);
      }
    }
    return { lapsed, nextDueInMs: next === Number.POSITIVE_INFINITY ? undefined : next - nowMs };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.log.close();
  }

  private lapse(key: PoolKey, held: HeldLease<R>): void {
    this.leases.delete(key);
    // atMs is when the lease ran out, not when someone noticed.
    this.log.append({ type: 'lapse', key, atMs: held.record.deadlineMs });
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('the memory store is closed');
  }
}
