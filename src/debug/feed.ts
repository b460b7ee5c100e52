// What the /debug page follows: a summary of every pool this replica holds, the detail of the one the
// page selected, and completeness. Changes come from XState inspection (PoolInspector) and from the
// heartbeats this replica takes; they are coalesced for `flushMs`, so a burst of events (a relist, many
// heartbeats) costs one message per subscriber, not one per event.
import type { Join } from '../join/join.js';
import type { Completeness } from '../join/listed-view.js';
import { detailPool, summarizePool } from './describe.js';
import type { PoolChange, PoolInspector } from './inspector.js';
import type { DebugPoolDetail, DebugPoolSummary, DebugStreamEvent, DebugStreamEvents, MachineGraph } from './types.js';

export interface DebugFeedOptions {
  join: Join;
  inspector: PoolInspector;
  graph: MachineGraph;
  /** How long changes are gathered before they are sent (default 100 ms). */
  flushMs?: number;
  now?: () => number;
}

interface Subscriber {
  selected: string | null;
  send: (event: DebugStreamEvent) => void;
}

export class DebugFeed {
  private readonly subscribers = new Set<Subscriber>();
  /** The last heartbeat this replica took, per pool (wall clock ms). */
  private readonly heartbeats = new Map<string, number>();
  private readonly changedSummaries = new Set<string>();
  private readonly removed = new Set<string>();
  private readonly changedDetails = new Set<string>();
  private readonly now: () => number;
  private readonly flushMs: number;
  private timer: NodeJS.Timeout | undefined;
  private completeness: Completeness;
  private readonly unsubscribers: (() => void)[] = [];

  constructor(private readonly options: DebugFeedOptions) {
    this.now = options.now ?? Date.now;
    this.flushMs = options.flushMs ?? 100;
    this.completeness = { complete: options.join.view.complete, reasons: [...options.join.view.reasons] };
    this.unsubscribers.push(
      options.inspector.subscribe((change) => this.onPoolChange(change)),
      options.join.onCompletenessChange((next) => this.onCompleteness(next)),
    );
  }

  get graph(): MachineGraph {
    return this.options.graph;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** A heartbeat for `key` was accepted by this replica's store. */
  noteHeartbeat(key: string): void {
    this.heartbeats.set(key, this.now());
    if (this.subscribers.size > 0) this.markDetail(key);
  }

  /** One pool in full, or undefined when this replica holds no actor for it. */
  detail(key: string): DebugPoolDetail | undefined {
    const actor = this.options.join.directory.get(key);
    if (!actor) return undefined;
    return detailPool(actor.getSnapshot().context, {
      graph: this.options.graph,
      causeOf: (entry) => this.options.inspector.causeOf(entry),
      lastHeartbeatMs: this.heartbeats.get(key),
    });
  }

  /** Everything a page needs to start, with the detail of `selected`. */
  snapshot(selected: string | null): DebugStreamEvents['snapshot'] {
    const pools: DebugPoolSummary[] = [];
    const contexts = this.options.join.directory.contexts();
    for (const key of [...contexts.keys()].sort()) pools.push(summarizePool(contexts.get(key)!));
    return {
      ...this.completeness,
      now_ms: this.now(),
      pools,
      selected: selected === null ? null : (this.detail(selected) ?? null),
    };
  }

  /** Follow changes; `selected` picks the pool whose detail is sent. Returns the unsubscribe function. */
  subscribe(selected: string | null, send: (event: DebugStreamEvent) => void): () => void {
    const subscriber: Subscriber = { selected, send };
    this.subscribers.add(subscriber);
    return () => {
      this.subscribers.delete(subscriber);
    };
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.subscribers.clear();
  }

  private onPoolChange(change: PoolChange): void {
    if (change.kind === 'stopped') this.heartbeats.delete(change.key);
    // With no page open there is nothing to send: a page that opens starts from a full snapshot.
    if (this.subscribers.size === 0) return;
    if (change.kind === 'stopped') {
      this.changedSummaries.delete(change.key);
      this.removed.add(change.key);
    } else {
      this.removed.delete(change.key);
      this.changedSummaries.add(change.key);
    }
    this.markDetail(change.key);
  }

  private onCompleteness(next: Completeness): void {
    const same =
      next.complete === this.completeness.complete &&
      next.reasons.length === this.completeness.reasons.length &&
      next.reasons.every((reason, i) => reason === this.completeness.reasons[i]);
    if (same) return;
    this.completeness = { complete: next.complete, reasons: [...next.reasons] };
    for (const subscriber of this.subscribers) subscriber.send({ kind: 'completeness', data: { ...this.completeness } });
  }

  private markDetail(key: string): void {
    this.changedDetails.add(key);
    this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  }

  private flush(): void {
    this.timer = undefined;
    const now = this.now();
    const contexts = this.options.join.directory;
    const upserted: DebugPoolSummary[] = [];
    for (const key of [...this.changedSummaries].sort()) {
      const actor = contexts.get(key);
      if (actor) upserted.push(summarizePool(actor.getSnapshot().context));
    }
    const removed = [...this.removed].sort();
    const details = new Map<string, DebugPoolDetail | null>();
    for (const subscriber of this.subscribers) {
      const key = subscriber.selected;
      if (key !== null && this.changedDetails.has(key) && !details.has(key)) details.set(key, this.detail(key) ?? null);
    }
    this.changedSummaries.clear();
    this.removed.clear();
    this.changedDetails.clear();
    for (const subscriber of this.subscribers) {
      if (upserted.length > 0 || removed.length > 0) subscriber.send({ kind: 'pools', data: { now_ms: now, upserted, removed } });
      const key = subscriber.selected;
      if (key !== null && details.has(key)) subscriber.send({ kind: 'pool', data: { now_ms: now, pool: details.get(key)! } });
    }
  }
}
