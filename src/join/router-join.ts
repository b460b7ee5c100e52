// The routers' join (docs/contract.md §10, docs/design.md "Routers"): router leases from every region's
// store, the static routers of `--router`, and the Ready endpoints of the Global Router Service in MCS
// modes, into one listed view of routers. A router is as simple as its lease: no state machine, only who
// lists it. Each region's router leases are followed by a RegionFeed exactly as its pools are (snapshot,
// then the log; the home store swept, a followed one's due deadlines read; a followed region that cannot be
// read held, then dropped), so routers follow every rule of §7 that pools do.
import type { Logger } from 'pino';
import { routerRegistrationSchema, type ListedRouter, type RouterList, type RouterRegistration, type RouterSource, type RouterWatchEvent } from '../contract/index.js';
import type { DueLapse, LeaseEvent, LeaseReader, RegistrationStore, StoreSnapshot } from '../store/types.js';
import type { BackoffOptions } from '../util/backoff.js';
import { regionEntry } from './region-entry.js';
import { RegionFeed, type RegionFeedStatus } from './region-feed.js';
import { ListedView, type ViewShape } from './listed-view.js';
import { SourceBook, type SourceStatus } from './sources.js';

/** The routers' view: GET /routers and /routers/watch; `?region=` reads a router's region. */
export const ROUTER_SHAPE: ViewShape<ListedRouter, RouterList, RouterWatchEvent> = {
  list: (base, routers) => {
    const { complete, revision, regions } = base;
    return { complete, revision, routers, ...(regions ? { regions } : {}) };
  },
  upsert: (router) => ({ kind: 'upsert', data: { revision: '', router } }),
  remove: ({ id }) => ({ kind: 'delete', data: { revision: '', router: { id } } }),
  filterOf: (router) => router.region ?? '',
};

export type RouterView = ListedView<ListedRouter, RouterList, RouterWatchEvent>;

export interface RouterJoinRegions {
  home: string;
  followed: readonly { name: string; store: LeaseReader<RouterRegistration> }[];
  holdMs: number;
}

/** A router not registered: from `--router` (static) or from the Global Router Service's slices (mcs). */
export interface KnownRouter {
  id: string;
  url: string;
  zone?: string;
}

export interface RouterJoinOptions {
  leaseMs: number;
  /** The home region's router leases: POST /routers writes here, this replica sweeps it. */
  store: RegistrationStore<RouterRegistration>;
  regions?: RouterJoinRegions;
  /** `--router id=url`: always listed, no lease. */
  staticRouters?: readonly KnownRouter[];
  /** Routers come from the Global Router Service's slices too: the list is incomplete until they are read. */
  mcs?: boolean;
  logger: Logger;
  now?: () => number;
  sweepIntervalMs?: number;
  dueGraceMs?: number;
  storeBackoff?: BackoffOptions;
}

/** One region's live lease of a router. */
interface RouterLease {
  registration: RouterRegistration;
  deadlineMs: number;
  changedAtMs: number;
}

const FOLLOWED_REGION_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 1000 };
const NO_REGION = '';

export class RouterJoin {
  readonly view: RouterView = new ListedView({ shape: ROUTER_SHAPE });
  private readonly feeds: RegionFeed<RouterRegistration>[];
  private readonly home: RegionFeed<RouterRegistration>;
  private readonly sources: SourceBook;
  /** Registered routers: each id's live leases by region. */
  private readonly leases = new Map<string, Map<string, RouterLease>>();
  private readonly staticRouters = new Map<string, KnownRouter>();
  private mcsRouters = new Map<string, KnownRouter>();
  private warmupTimer: NodeJS.Timeout | undefined;
  /** Keys already warned of as unreadable (once per key and content). */
  private readonly unreadable = new Set<string>();
  /** Per dropped region, the router leases its drop took, until it is read again (as the pools': RegionLeases). */
  private readonly kept = new Map<string, Array<[id: string, lease: RouterLease]>>();

  constructor(private readonly options: RouterJoinOptions) {
    const withRegions = options.regions !== undefined;
    this.sources = new SourceBook({
      onChange: (completeness) => this.view.setCompleteness(completeness),
      regions: withRegions ? () => this.regionStatuses().map(regionEntry) : undefined,
    });
    const logger = options.logger.child({ lease_kind: 'routers' });
    // A region's router leases live in the same Redis as its pools, read on the same terms: the pools'
    // feed of that region already says when it cannot be read, is held, dropped, read again, or ended an
    // outage (one warning per event and replica, docs/contract.md §7, §9). The routers' feed says only its
    // errors, unless the replica logs at debug or below.
    const feedLogger = options.logger.levelVal > options.logger.levels.values.debug! ? logger.child({}, { level: 'error' }) : logger;
    const feed = (region: string, store: LeaseReader<RouterRegistration>, home?: RegistrationStore<RouterRegistration>) =>
      new RegionFeed<RouterRegistration>({
        region,
        store,
        home,
        holdMs: options.regions?.holdMs,
        leaseMs: options.leaseMs,
        logger: feedLogger,
        now: options.now,
        sweepIntervalMs: options.sweepIntervalMs,
        dueGraceMs: options.dueGraceMs,
        backoff: options.storeBackoff ?? (home ? undefined : FOLLOWED_REGION_BACKOFF),
        sink: {
          snapshot: (r, snapshot, holdMissing) => this.applySnapshot(r, snapshot, holdMissing),
          resumed: (r, _receipt, due) => this.resumeRegion(r, due),
          event: (r, event) => this.applyEvent(r, event),
          due: (r, lapses) => this.applyDue(r, lapses),
          status: (r) => this.updateRegionSource(r),
          drop: (r) => this.dropRegion(r),
        },
      });
    this.home = feed(options.regions?.home ?? NO_REGION, options.store, options.store);
    this.feeds = [this.home, ...(options.regions?.followed ?? []).map((r) => feed(r.name, r.store))];
    // Stryker disable next-line EqualityOperator,ConditionalExpression: equivalent, region names are distinct (the regions file refuses a name twice) and V8 sorts so few by insertion, reading only whether a result is negative
    this.feeds.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const f of this.feeds) this.sources.add(this.sourceOf(f));
    if (options.mcs) this.sources.add({ name: 'kubernetes', synced: false, reason: 'kubernetes: Global Router EndpointSlices not listed yet' });
    if (options.store.forgetsOnRestart) {
      const until = new Date((options.now ?? Date.now)() + options.leaseMs).toISOString();
      this.sources.add({ name: 'warmup', synced: false, reason: `memory store: router leases renewed before this replica started may be missing until ${until}` });
    }
    for (const router of options.staticRouters ?? []) this.staticRouters.set(router.id, router);
    this.view.batch(() => {
      for (const id of this.staticRouters.keys()) this.refresh(id);
    });
    this.sources.publish();
  }

  start(): void {
    for (const f of this.feeds) f.start();
    if (this.sources.has('warmup')) {
      this.warmupTimer = setTimeout(() => this.sources.set({ name: 'warmup', synced: true }), this.options.leaseMs);
      this.warmupTimer.unref();
    }
  }

  async stop(): Promise<void> {
    clearTimeout(this.warmupTimer);
    await Promise.all(this.feeds.map((f) => f.stop()));
  }

  /** Every region's router feed, sorted by name (one, named '', without regions). */
  regionStatuses(): RegionFeedStatus[] {
    return this.feeds.map((f) => f.status);
  }

  sourceStatuses(): SourceStatus[] {
    return this.sources.statuses();
  }

  /** The Global Router Service's Ready routers, as the slice source last read them (a full list each time). */
  setMcsRouters(routers: readonly KnownRouter[]): void {
    const before = this.mcsRouters;
    this.mcsRouters = new Map(routers.map((r) => [r.id, r]));
    const ids = new Set([...before.keys(), ...this.mcsRouters.keys()]);
    for (const id of ids) {
      // Stryker disable next-line ConditionalExpression: equivalent in behaviour, the view publishes nothing for a router listed as it was; the check only saves building it
      if (JSON.stringify(before.get(id)) !== JSON.stringify(this.mcsRouters.get(id))) this.refresh(id);
    }
  }

  /** The EndpointSlice source's status: the MCS routers are complete only while it is synced. */
  setMcsStatus(synced: boolean, reason?: string): void {
    if (this.sources.has('kubernetes')) this.sources.set({ name: 'kubernetes', synced, ...(reason ? { reason: `kubernetes: ${reason}` } : {}) });
  }

  private sourceOf(feed: RegionFeed<RouterRegistration>): SourceStatus {
    const { reason } = feed.status;
    const name = this.options.regions ? `region:${feed.name}` : 'store';
    const prefix = this.options.regions ? `region ${feed.name}: ` : '';
    // Stryker disable next-line ConditionalExpression: equivalent, an undefined reason is not 'not read yet' and stays undefined either way
    const full = reason === undefined ? undefined : reason === 'not read yet' ? 'router store: not read yet' : reason;
    return { name, synced: feed.complete, ...(full ? { reason: prefix + full } : {}) };
  }

  private updateRegionSource(region: string): void {
    const feed = this.feeds.find((f) => f.name === region);
    // Stryker disable next-line ConditionalExpression: equivalent, every region a feed reports is a feed's; the check serves the type
    if (feed) this.sources.set(this.sourceOf(feed));
  }

  private applyEvent(region: string, event: LeaseEvent<RouterRegistration>): void {
    if (event.type === 'upsert') {
      const { key, registration, deadlineMs, changedAtMs } = event.record;
      this.setLease(region, key, { registration, deadlineMs, changedAtMs });
    } else {
      this.clearLease(region, event.key);
    }
  }

  private async applySnapshot(region: string, snapshot: StoreSnapshot<RouterRegistration>, holdMissing: boolean): Promise<void> {
    this.kept.delete(region);
    const live = new Set<string>();
    this.view.batch(() => {
      for (const { key, registration, deadlineMs, changedAtMs } of snapshot.records) {
        live.add(key);
        this.setLease(region, key, { registration, deadlineMs, changedAtMs });
      }
      if (holdMissing) return;
      for (const [id, byRegion] of this.leases) if (byRegion.has(region) && !live.has(id)) this.clearLease(region, id);
    });
  }

  private applyDue(region: string, lapses: readonly DueLapse[]): void {
    for (const { key, atMs } of lapses) {
      const lease = this.leases.get(key)?.get(region);
      if (lease && lease.deadlineMs <= atMs) this.clearLease(region, key);
    }
  }

  /** The hold ran out: every router lease of the region leaves this replica's view (a `delete` each). */
  private dropRegion(region: string): boolean {
    // As the pools' drop (RegionLeases.drop): a region is dropped once per time it cannot be read, and
    // whatever read it last took what an earlier drop kept.
    const kept: Array<[id: string, lease: RouterLease]> = [];
    for (const [id, byRegion] of [...this.leases]) {
      const lease = byRegion.get(region);
      if (lease === undefined) continue;
      kept.push([id, lease]);
      this.clearLease(region, id);
    }
    this.kept.set(region, kept);
    return true;
  }

  /**
   * The region's log was resumed where it was left: the router leases its drop took come back, but for
   * those whose deadline passed meanwhile (`due`); the log's entries since follow.
   */
  private resumeRegion(region: string, due: readonly DueLapse[]): void {
    const kept = this.kept.get(region);
    if (kept === undefined) return;
    this.kept.delete(region);
    const ranOut = new Set(due.map(({ key }) => key));
    for (const [id, lease] of kept) if (!ranOut.has(id) && !this.leases.get(id)?.has(region)) this.setLease(region, id, lease);
  }

  private setLease(region: string, id: string, lease: RouterLease): void {
    // What the store holds was checked when it was written; an entry this version cannot read (another
    // version wrote it, or someone wrote the key by hand) is skipped, once logged.
    const checked = routerRegistrationSchema.safeParse(lease.registration);
    if (!checked.success || checked.data.id !== id) {
      const mark = `${region}\0${id}\0${JSON.stringify(lease.registration)}`;
      if (!this.unreadable.has(mark)) {
        this.unreadable.add(mark);
        this.options.logger.warn({ router: id, ...(region ? { region } : {}) }, 'unreadable router entry skipped');
      }
      return;
    }
    let byRegion = this.leases.get(id);
    if (byRegion === undefined) this.leases.set(id, (byRegion = new Map()));
    byRegion.set(region, { ...lease, registration: checked.data });
    this.refresh(id);
  }

  private clearLease(region: string, id: string): void {
    const byRegion = this.leases.get(id);
    if (!byRegion?.delete(region)) return;
    if (byRegion.size === 0) this.leases.delete(id);
    this.refresh(id);
  }

  /** The router listed under `id` now, by the rule of docs/contract.md §10 (static, then registered, then MCS). */
  private refresh(id: string): void {
    this.view.update(id, this.listed(id));
  }

  private listed(id: string): ListedRouter | null {
    const known = (router: KnownRouter, source: RouterSource): ListedRouter => ({
      id: router.id,
      url: router.url,
      ...(router.zone !== undefined ? { zone: router.zone } : {}),
      source,
    });
    const fixed = this.staticRouters.get(id);
    if (fixed) return known(fixed, 'static');
    // A router with no live lease left has no entry (clearLease removes it).
    const byRegion = this.leases.get(id);
    if (byRegion) {
      // Of several regions' leases, the latest content change is shown; ties: the region that sorts first.
      let chosen: [string, RouterLease] | undefined;
      for (const entry of byRegion) {
        if (
          chosen === undefined ||
          entry[1].changedAtMs > chosen[1].changedAtMs ||
          (entry[1].changedAtMs === chosen[1].changedAtMs && entry[0] < chosen[0])
        ) {
          chosen = entry;
        }
      }
      const { registration } = chosen![1];
      return {
        id,
        url: registration.url,
        ...(registration.region !== undefined ? { region: registration.region } : {}),
        ...(registration.zone !== undefined ? { zone: registration.zone } : {}),
        source: 'registration',
        ...(this.options.regions ? { lease_regions: [...byRegion.keys()].sort() } : {}),
      };
    }
    const discovered = this.mcsRouters.get(id);
    return discovered ? known(discovered, 'mcs') : null;
  }
}
