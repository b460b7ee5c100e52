// The join: lease events from every region's store and slice events from Kubernetes into one pool
// machine per pool, and the listed view derived from their snapshots (docs/design.md "The actors").
// Each store is followed by a RegionFeed (one, named '', without regions); the join turns what the
// feeds read into pool events that name their region, and the feeds' statuses into completeness.
import type { Logger } from 'pino';
import { frontendsOf, highestVersion, leaseRegions, NO_REGION, type PoolMode } from '../../machines/pool.machine.js';
import type { ListedPool, PoolDiscovery, PoolKey, PoolState, RegionStatus } from '../contract/index.js';
import { LISTED_STATES, parsePoolKey, poolKey } from '../contract/index.js';
import type { PoolEndpoints, SliceRouter, SliceSource } from '../kube/types.js';
import type { LeaseReader, RegistrationStore, StoreStats } from '../store/types.js';
import type { BackoffOptions } from '../util/backoff.js';
import { ListedView, type Completeness } from './listed-view.js';
import { PoolDirectory, type PoolDirectoryOptions, type PoolSnapshot } from './pool-directory.js';
import { regionEntry } from './region-entry.js';
import { RegionFeed, type RegionFeedStatus } from './region-feed.js';
import { RegionLeases } from './region-leases.js';
import { SourceBook, type SourceStatus } from './sources.js';
import type { WarningKind } from './warnings.js';

export type { SourceStatus } from './sources.js';

/** Regions (docs/contract.md §7): the home store is `JoinOptions.store`; every other region is followed. */
export interface JoinRegions {
  home: string;
  followed: readonly { name: string; store: LeaseReader }[];
  /** How long a followed region that cannot be read keeps its pools before they are dropped. */
  holdMs: number;
}

export interface JoinOptions {
  poolDiscovery: PoolDiscovery;
  leaseMs: number;
  /** The store this replica writes heartbeats to and sweeps (the home region's, with regions). */
  store: RegistrationStore;
  regions?: JoinRegions;
  /** The EndpointSlice source, in mcs/karmada modes. */
  slices?: SliceSource;
  logger: Logger;
  frontendServiceSuffix?: string;
  frontendPortName?: string;
  now?: () => number;
  clock?: PoolDirectoryOptions['clock'];
  retentionMs?: number;
  sweepIntervalMs?: number;
  /** How long past its deadline a followed region's lease is read as lapsed there (default 1 s). */
  dueGraceMs?: number;
  storeBackoff?: BackoffOptions;
  onWarning?: (kind: WarningKind) => void;
  /** A followed region's hold ran out and its pools were dropped (for metrics). */
  onRegionDropped?: (region: string) => void;
  /** This replica learned of an outage of a region's store (for metrics; '' without regions). */
  onStoreOutage?: (region: string) => void;
  /** The EndpointSlice loop failed unexpectedly and restarts (for metrics). */
  onSliceLoopRestart?: () => void;
  /** Every step of every pool (the /debug page's PoolInspector). */
  inspect?: PoolDirectoryOptions['inspect'];
  /** Pools applied per turn of the event loop while a store snapshot is applied (default 2,000). */
  applyBatchSize?: number;
}

const LISTED = new Set<PoolState>(LISTED_STATES);
const FOLLOWED_REGION_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 1000 };

export class Join {
  readonly view = new ListedView();
  readonly directory: PoolDirectory;
  readonly mode: PoolMode;
  private readonly feeds: RegionFeed[];
  private readonly home: RegionFeed;
  private readonly sources: SourceBook;
  private warmupTimer: NodeJS.Timeout | undefined;
  /** Who hears of the Global Router Service's routers and the slice source's status (the routers' join). */
  private routerSink: { routers(routers: readonly SliceRouter[]): void; status(synced: boolean, reason?: string): void } | undefined;
  /** Keys the slice source lists, so a relist knows which pools it dropped. */
  private sliceKeys = new Set<PoolKey>();
  /** Why the EndpointSlice loop is down (failed unexpectedly, restarting), for /healthz. */
  private sliceLoopDown: string | undefined;
  private readonly completenessListeners = new Set<(completeness: Completeness) => void>();
  /** What each region's leases do to the pools: snapshots, log events, due reads, drops. */
  private readonly leases: RegionLeases;

  constructor(private readonly options: JoinOptions) {
    this.mode = options.poolDiscovery === 'registrations' ? 'registrations' : 'mcs';
    const withRegions = options.regions !== undefined;
    this.directory = new PoolDirectory({
      mode: this.mode,
      leaseMs: options.leaseMs,
      logger: options.logger,
      frontendServiceSuffix: options.frontendServiceSuffix ?? '-frontend',
      frontendPortName: options.frontendPortName ?? 'http',
      onSnapshot: (key, snapshot) => this.view.update(key, listedPool(snapshot, withRegions)),
      now: options.now,
      clock: options.clock,
      retentionMs: options.retentionMs,
      onWarning: options.onWarning,
      inspect: options.inspect,
    });
    this.leases = new RegionLeases({
      directory: this.directory,
      view: this.view,
      batchSize: options.applyBatchSize,
      onRegionDropped: options.onRegionDropped,
    });
    this.sources = new SourceBook({
      onChange: (completeness) => {
        this.view.setCompleteness(completeness);
        for (const listener of this.completenessListeners) listener(completeness);
      },
      regions: withRegions ? () => this.regionStatuses().map(regionEntry) : undefined,
    });
    const feed = (region: string, store: LeaseReader, home?: RegistrationStore) =>
      new RegionFeed({
        region,
        store,
        home,
        holdMs: options.regions?.holdMs,
        leaseMs: options.leaseMs,
        logger: options.logger,
        now: options.now,
        sweepIntervalMs: options.sweepIntervalMs,
        dueGraceMs: options.dueGraceMs,
        // A followed region is probed at least once a second while cut off, so its pools return within
        // about a second of its Redis answering again (docs/contract.md §7); one read per replica and
        // region is cheap. The home store keeps the longer backoff of a store every heartbeat depends on.
        backoff: options.storeBackoff ?? (home ? undefined : FOLLOWED_REGION_BACKOFF),
        sink: {
          // A followed region's leases are applied as they are read: its read waits on a WAN's round trips
          // meanwhile. The home region's is read whole: its Redis is near, so the read keeps this replica
          // busy throughout, and parts published would only make every GET /pools meanwhile write a body.
          ...(home ? {} : { reading: (r: string, receipt: number) => this.leases.reading(r, receipt) }),
          snapshot: (r, snapshot, holdMissing, receipt) => this.leases.snapshot(r, snapshot, holdMissing, receipt),
          resumed: (r, receipt, due) => this.leases.resumed(r, receipt, due),
          event: (r, event, receipt) => this.leases.event(r, event, receipt),
          due: (r, lapses, sentAfter) => this.leases.due(r, lapses, sentAfter),
          status: (r) => this.updateRegionSource(r),
          drop: (r) => this.leases.drop(r),
          outage: (r) => options.onStoreOutage?.(r),
        },
      });
    this.home = feed(options.regions?.home ?? NO_REGION, options.store, options.store);
    this.feeds = [this.home, ...(options.regions?.followed ?? []).map((r) => feed(r.name, r.store))];
    this.feeds.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const f of this.feeds) this.sources.add(this.sourceOf(f));
    if (options.slices) {
      this.sources.add({ name: 'kubernetes', synced: false, reason: 'kubernetes: EndpointSlices not listed yet' });
    }
    if (options.store.forgetsOnRestart) {
      const until = new Date((options.now ?? Date.now)() + options.leaseMs).toISOString();
      this.sources.add({
        name: 'warmup',
        synced: false,
        reason: `memory store: leases renewed before this replica started may be missing until ${until}`,
      });
    }
    this.sources.publish();
  }

  /** Hand the routers the slice source reads, and its status, to `sink` (call before start). */
  followRouters(sink: { routers(routers: readonly SliceRouter[]): void; status(synced: boolean, reason?: string): void }): void {
    this.routerSink = sink;
  }

  start(): void {
    this.directory.start();
    for (const f of this.feeds) f.start();
    if (this.sources.has('warmup')) {
      this.warmupTimer = setTimeout(() => this.sources.set({ name: 'warmup', synced: true }), this.options.leaseMs);
      this.warmupTimer.unref();
    }
    this.options.slices?.start({
      resync: (pools) => this.applySliceResync(pools),
      update: (key, endpoints) => this.applySlices(key, endpoints),
      routers: (routers) => this.routerSink?.routers(routers),
      status: (synced, reason) => {
        this.sources.set({ name: 'kubernetes', synced, ...(reason ? { reason: `kubernetes: ${reason}` } : {}) });
        this.routerSink?.status(synced, reason);
      },
      loopDown: (reason) => {
        if (reason !== undefined) this.options.onSliceLoopRestart?.();
        this.sliceLoopDown = reason === undefined ? undefined : `kubernetes: ${reason}`;
      },
    });
  }

  async stop(): Promise<void> {
    if (this.warmupTimer) clearTimeout(this.warmupTimer);
    this.leases.stop();
    await Promise.all([...this.feeds.map((f) => f.stop()), this.options.slices?.stop()]);
    this.directory.stop();
  }

  /** Every source and whether it is synced, for /healthz, /readyz and metrics. */
  sourceStatuses(): SourceStatus[] {
    return this.sources.statuses();
  }

  /** Every region's feed, sorted by name (one, named '', without regions). */
  regionStatuses(): RegionFeedStatus[] {
    return this.feeds.map((f) => f.status);
  }

  /** Whether regions are configured (replies then carry `regions` and `lease_regions`). */
  get hasRegions(): boolean {
    return this.options.regions !== undefined;
  }

  /**
   * The home store (and, in mcs/karmada modes, the EndpointSlices) has been read in full at least once
   * (/readyz). Followed regions never hold it back: they are reported in `regions` (docs/contract.md §9).
   */
  get ready(): boolean {
    return this.sources.everSyncedAll(this.readinessSources());
  }

  /** The sources /readyz waits for. */
  readinessSources(): string[] {
    return [this.sourceName(this.home), ...(this.options.slices ? ['kubernetes'] : [])];
  }

  /** The home store's renewal window, once an outage of it was recorded (/healthz without regions). */
  get homeWindow(): { last_outage_ended: string; renewal_window_open: boolean } | undefined {
    const { lastOutageEndedMs, renewalWindowOpen } = this.home.status;
    if (lastOutageEndedMs === undefined) return undefined;
    return { last_outage_ended: new Date(lastOutageEndedMs).toISOString(), renewal_window_open: renewalWindowOpen };
  }

  /** The counters of every store this replica reads (its own and each followed region's), summed, for /metrics. */
  storeStats(): StoreStats {
    const stores = [this.options.store, ...(this.options.regions?.followed ?? []).map((r) => r.store)];
    const total: StoreStats = { reconnects: 0, unreadableEntries: 0 };
    for (const stats of stores.map((store) => store.stats?.())) {
      total.reconnects += stats?.reconnects ?? 0;
      total.unreadableEntries += stats?.unreadableEntries ?? 0;
    }
    return total;
  }

  /** The store this replica writes to answered the last read (/healthz). */
  get storeReadable(): { ok: boolean; reason?: string } {
    // Readable only once a read succeeded: before the first one it cannot be told from one that never
    // will (docs/contract.md §5); afterwards, until a read fails.
    if (this.home.status.readable) return { ok: true };
    return { ok: false, reason: this.sources.get(this.sourceName(this.home))?.reason ?? 'store cannot be read' };
  }

  /** A source's loop that failed unexpectedly and is not synced again yet (/healthz): why, naming the source. */
  get sourceDown(): string | undefined {
    return this.sliceLoopDown;
  }

  /**
   * Follow completeness and its reasons (the /debug banner). Unlike the listed view's `resync`, a change of
   * reason alone is reported too. Returns the unsubscribe function.
   */
  onCompletenessChange(listener: (completeness: Completeness) => void): () => void {
    this.completenessListeners.add(listener);
    return () => {
      this.completenessListeners.delete(listener);
    };
  }

  private sourceName(feed: RegionFeed): string {
    return this.options.regions ? `region:${feed.name}` : 'store';
  }

  private sourceOf(feed: RegionFeed): SourceStatus {
    const { reason } = feed.status;
    const prefix = this.options.regions ? `region ${feed.name}: ` : '';
    const full = reason === undefined ? undefined : reason === 'not read yet' ? `store: not read yet` : reason;
    return { name: this.sourceName(feed), synced: feed.complete, ...(full ? { reason: prefix + full } : {}) };
  }

  private updateRegionSource(region: string): void {
    const feed = this.feeds.find((f) => f.name === region);
    if (feed) this.sources.set(this.sourceOf(feed));
  }

  /**
   * The highest version of the pool's registration among the live leases this replica knows, in any region
   * (0 for none): a heartbeat taken here writes a content change above it (docs/contract.md §7).
   */
  knownVersion(key: PoolKey): number {
    const snapshot = this.directory.snapshot(key);
    return snapshot ? highestVersion(snapshot.context) : 0;
  }

  private applySlices(key: PoolKey, endpoints: PoolEndpoints | null): void {
    if (endpoints) this.sliceKeys.add(key);
    else this.sliceKeys.delete(key);
    const event = {
      type: 'SLICES' as const,
      relays: endpoints?.relays ?? [],
      frontends: endpoints?.frontends ?? [],
      frontendSlicesWithPort: endpoints?.frontendSlicesWithPort ?? false,
    };
    if (endpoints) this.directory.send(key, event);
    else this.directory.sendIfKnown(key, event);
  }

  private applySliceResync(pools: ReadonlyMap<PoolKey, PoolEndpoints>): void {
    const before = this.sliceKeys;
    this.sliceKeys = new Set();
    this.view.batch(() => {
      for (const [key, endpoints] of pools) this.applySlices(key, endpoints);
      for (const key of before) if (!pools.has(key)) this.applySlices(key, null);
    });
  }
}

/** The pool as GET /pools lists it, or null when its state is not listed. */
export function listedPool(snapshot: PoolSnapshot, withRegions = false): ListedPool | null {
  const state = snapshot.value as PoolState;
  const context = snapshot.context;
  if (!LISTED.has(state) || !context.registration) return null;
  const { registration } = context;
  // The registration's own strings when they spell the key (as the store's always do): a copy of each
  // split from the key would be three more strings a pool (docs/design.md "Memory per pool").
  const { cluster_id, namespace, name } = poolKey(registration) === context.key ? registration : parsePoolKey(context.key);
  return {
    cluster_id,
    namespace,
    name,
    model: registration.model,
    capabilities: registration.capabilities,
    capacity: registration.capacity,
    location: registration.location,
    relays: context.mode === 'registrations' ? (registration.relay ? [registration.relay] : []) : context.relays,
    frontends: frontendsOf(context),
    state: state as ListedPool['state'],
    ...(withRegions ? { lease_regions: leaseRegions(context) } : {}),
  };
}
