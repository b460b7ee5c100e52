// What the /debug page follows: a summary of every pool this replica holds, the detail of the one the
// page selected, completeness, every region's status and the fleet overview (docs/contract.md §7).
// Changes come from the pools' steps (PoolInspector), from the heartbeats this replica takes and from the
// join's completeness; pool changes are coalesced for `flushMs`, so a burst of events (a relist, many
// heartbeats) costs one message per subscriber, not one per event. Regions and the overview are sent to a
// subscriber only when they differ from what it last got.
import type { Join } from '../join/join.js';
import type { Completeness } from '../join/listed-view.js';
import { detailPool, summarizePool } from './describe.js';
import type { PoolChange, PoolInspector } from './inspector.js';
import { fleetOverview } from './overview.js';
import { debugRegion } from './regions.js';
import type { DebugPoolDetail, DebugPoolSummary, DebugRegion, DebugStreamEvent, DebugStreamEvents, FleetOverview, MachineGraph } from './types.js';

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
  /** JSON of the regions and the overview it last got (from the snapshot or an event). */
  regions: string;
  overview: string;
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
  /** A pool changed since the overview was last computed. */
  private overviewDirty = true;
  private overviewCache: { overview: FleetOverview; json: string } | undefined;

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

  /** One pool in full, or undefined when this replica does not hold it. */
  detail(key: string): DebugPoolDetail | undefined {
    const snapshot = this.options.join.directory.snapshot(key);
    if (!snapshot) return undefined;
    return detailPool(snapshot.context, {
      graph: this.options.graph,
      causeOf: (entry) => this.options.inspector.causeOf(entry),
      lastHeartbeatMs: this.heartbeats.get(key),
    });
  }

  /** Every region's status, sorted; null without regions. */
  regions(): DebugRegion[] | null {
    const { join } = this.options;
    return join.hasRegions ? join.regionStatuses().map(debugRegion) : null;
  }

  /** Pools by region and state, and by model (see fleetOverview). */
  overview(): FleetOverview {
    return this.currentOverview().overview;
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
      regions: this.regions(),
      overview: this.overview(),
    };
  }

  /**
   * Follow changes; `selected` picks the pool whose detail is sent. `from`: the snapshot the subscriber
   * started from, so regions and overview are sent only where they changed since (all of them without it).
   * Returns the unsubscribe function.
   */
  subscribe(selected: string | null, send: (event: DebugStreamEvent) => void, from?: DebugStreamEvents['snapshot']): () => void {
    const subscriber: Subscriber = {
      selected,
      send,
      regions: from ? JSON.stringify(from.regions) : '',
      overview: from ? JSON.stringify(from.overview) : '',
    };
    this.subscribers.add(subscriber);
    this.scheduleFlush();
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
    this.overviewDirty = true;
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
    // A region's status may change without changing completeness (a held region that is dropped).
    this.sendRegions(this.now());
    const same =
      next.complete === this.completeness.complete &&
      next.reasons.length === this.completeness.reasons.length &&
      next.reasons.every((reason, i) => reason === this.completeness.reasons[i]);
    if (same) return;
    this.completeness = { complete: next.complete, reasons: [...next.reasons] };
    for (const subscriber of this.subscribers) subscriber.send({ kind: 'completeness', data: { ...this.completeness } });
  }

  private sendRegions(now: number): void {
    if (this.subscribers.size === 0) return;
    const regions = this.regions();
    if (regions === null) return;
    const json = JSON.stringify(regions);
    for (const subscriber of this.subscribers) {
      if (subscriber.regions === json) continue;
      subscriber.regions = json;
      subscriber.send({ kind: 'regions', data: { now_ms: now, regions } });
    }
  }

  private currentOverview(): { overview: FleetOverview; json: string } {
    if (this.overviewDirty || !this.overviewCache) {
      const { join } = this.options;
      const regions = join.hasRegions ? join.regionStatuses().map((r) => r.name) : undefined;
      const overview = fleetOverview(join.directory.contexts().values(), { regions });
      this.overviewCache = { overview, json: JSON.stringify(overview) };
      this.overviewDirty = false;
    }
    return this.overviewCache;
  }

  private markDetail(key: string): void {
    this.changedDetails.add(key);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  }

  private flush(): void {
    this.timer = undefined;
    const now = this.now();
    const contexts = this.options.join.directory;
    const upserted: DebugPoolSummary[] = [];
    for (const key of [...this.changedSummaries].sort()) {
      const snapshot = contexts.snapshot(key);
      if (snapshot) upserted.push(summarizePool(snapshot.context));
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
    const overview = this.subscribers.size > 0 ? this.currentOverview() : undefined;
    for (const subscriber of this.subscribers) {
      if (upserted.length > 0 || removed.length > 0) subscriber.send({ kind: 'pools', data: { now_ms: now, upserted, removed } });
      const key = subscriber.selected;
      if (key !== null && details.has(key)) subscriber.send({ kind: 'pool', data: { now_ms: now, pool: details.get(key)! } });
      if (overview && subscriber.overview !== overview.json) {
        subscriber.overview = overview.json;
        subscriber.send({ kind: 'overview', data: { now_ms: now, overview: overview.overview } });
      }
    }
    this.sendRegions(now);
  }
}
