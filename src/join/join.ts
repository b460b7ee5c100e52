// The join: lease events from the store and slice events from Kubernetes into one actor per pool, and
// the listed view derived from the actors' snapshots (DESIGN.md "The actors").
import type { Logger } from 'pino';
import type { InspectionEvent } from 'xstate';
import type { PoolMode } from '../../machines/pool.machine.js';
import { frontendsOf } from '../../machines/pool.machine.js';
import type { ListedPool, PoolDiscovery, PoolKey, PoolState, Registration } from '../contract/index.js';
import { LISTED_STATES, parsePoolKey } from '../contract/index.js';
import type { PoolEndpoints, SliceSource } from '../kube/types.js';
import type { RegistrationStore, StoreSnapshot } from '../store/types.js';
import type { BackoffOptions } from '../util/backoff.js';
import { ListedView, type Completeness } from './listed-view.js';
import { PoolDirectory, type PoolSnapshot } from './pool-directory.js';
import { StoreFeed } from './store-feed.js';
import type { WarningKind } from './warnings.js';

export interface JoinOptions {
  poolDiscovery: PoolDiscovery;
  leaseMs: number;
  store: RegistrationStore;
  /** The EndpointSlice source, in mcs/karmada modes. */
  slices?: SliceSource;
  logger: Logger;
  frontendServiceSuffix?: string;
  frontendPortName?: string;
  now?: () => number;
  clock?: ConstructorParameters<typeof PoolDirectory>[0]['clock'];
  retentionMs?: number;
  sweepIntervalMs?: number;
  storeBackoff?: BackoffOptions;
  onWarning?: (kind: WarningKind) => void;
  inspect?: (event: InspectionEvent) => void;
}

export interface SourceStatus {
  name: 'store' | 'kubernetes' | 'warmup';
  synced: boolean;
  reason?: string;
}

const LISTED = new Set<PoolState>(LISTED_STATES);

export class Join {
  readonly view = new ListedView();
  readonly directory: PoolDirectory;
  readonly mode: PoolMode;
  private readonly feed: StoreFeed;
  private readonly sources = new Map<SourceStatus['name'], SourceStatus>();
  private readonly everSynced = new Set<SourceStatus['name']>();
  /** The feed's last read of the store failed (not merely: not read yet). */
  private storeReadFailed = false;
  private warmupTimer: NodeJS.Timeout | undefined;
  /** The store's epoch as of the last snapshot; a change means the store lost its data. */
  private storeEpoch: string | undefined;
  /** While set, a store that lost its data is being refilled by heartbeats: hold pools it lacks. */
  private storeRefill: NodeJS.Timeout | undefined;
  /** The refill's lease is over: the next snapshot decides, then the view is complete again. */
  private refillEnding = false;
  /** Keys the slice source lists, so a relist knows which pools it dropped. */
  private sliceKeys = new Set<PoolKey>();
  private readonly completenessListeners = new Set<(completeness: Completeness) => void>();

  constructor(private readonly options: JoinOptions) {
    this.mode = options.poolDiscovery === 'registrations' ? 'registrations' : 'mcs';
    this.directory = new PoolDirectory({
      mode: this.mode,
      leaseMs: options.leaseMs,
      logger: options.logger,
      frontendServiceSuffix: options.frontendServiceSuffix ?? '-frontend',
      frontendPortName: options.frontendPortName ?? 'http',
      onSnapshot: (key, snapshot) => this.view.update(key, listedPool(snapshot)),
      now: options.now,
      clock: options.clock,
      retentionMs: options.retentionMs,
      onWarning: options.onWarning,
      inspect: options.inspect,
    });
    this.feed = new StoreFeed({
      store: options.store,
      logger: options.logger,
      sink: {
        snapshot: (snapshot) => this.applyStoreSnapshot(snapshot),
        event: (event) => {
          if (event.type === 'upsert') {
            const { key, registration, deadlineMs } = event.record;
            this.directory.send(key, { type: 'LEASE_UPSERT', registration, deadlineMs });
          } else {
            this.directory.sendIfKnown(event.key, { type: 'LEASE_LAPSED' });
          }
        },
        status: (readable, reason) => {
          this.storeReadFailed = !readable;
          this.setSource({ name: 'store', synced: readable, ...(reason ? { reason } : {}) });
        },
      },
      sweepIntervalMs: options.sweepIntervalMs,
      backoff: options.storeBackoff,
    });
    this.sources.set('store', { name: 'store', synced: false, reason: 'store: not read yet' });
    if (options.slices) {
      this.sources.set('kubernetes', { name: 'kubernetes', synced: false, reason: 'kubernetes: EndpointSlices not listed yet' });
    }
    if (options.store.forgetsOnRestart) {
      const until = new Date((options.now ?? Date.now)() + options.leaseMs).toISOString();
      this.sources.set('warmup', {
        name: 'warmup',
        synced: false,
        reason: `memory store: leases renewed before this replica started may be missing until ${until}`,
      });
    }
    this.updateCompleteness();
  }

  start(): void {
    this.directory.start();
    this.feed.start();
    if (this.sources.has('warmup')) {
      this.warmupTimer = setTimeout(() => this.setSource({ name: 'warmup', synced: true }), this.options.leaseMs);
      this.warmupTimer.unref();
    }
    this.options.slices?.start({
      resync: (pools) => this.applySliceResync(pools),
      update: (key, endpoints) => this.applySlices(key, endpoints),
      status: (synced, reason) =>
        this.setSource({ name: 'kubernetes', synced, ...(reason ? { reason: `kubernetes: ${reason}` } : {}) }),
    });
  }

  async stop(): Promise<void> {
    if (this.warmupTimer) clearTimeout(this.warmupTimer);
    if (this.storeRefill) clearTimeout(this.storeRefill);
    await Promise.all([this.feed.stop(), this.options.slices?.stop()]);
    this.directory.stop();
  }

  /** Every source and whether it is synced, for /healthz, /readyz and metrics. */
  sourceStatuses(): SourceStatus[] {
    return [...this.sources.values()].map((s) => ({ ...s }));
  }

  /** Every source has been read in full at least once (/readyz). */
  get ready(): boolean {
    return [...this.sources.keys()].every((name) => name === 'warmup' || this.everSynced.has(name));
  }

  /** The store answered the last read (/healthz). */
  get storeReadable(): { ok: boolean; reason?: string } {
    const store = this.sources.get('store');
    // A store that has failed every read since start cannot be read either (not only after a first success).
    if (!store || !this.storeReadFailed) return { ok: true };
    return { ok: false, reason: store.reason ?? 'store cannot be read' };
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

  private setSource(status: SourceStatus): void {
    this.sources.set(status.name, status);
    if (status.synced) this.everSynced.add(status.name);
    this.updateCompleteness();
  }

  private updateCompleteness(): void {
    const reasons = [...this.sources.values()].filter((s) => !s.synced).map((s) => s.reason ?? `${s.name}: not synced`);
    const completeness = { complete: reasons.length === 0, reasons };
    this.view.setCompleteness(completeness);
    for (const listener of this.completenessListeners) listener(completeness);
  }

  private applyStoreSnapshot(snapshot: StoreSnapshot): void {
    const reset = this.storeEpoch !== undefined && snapshot.epoch !== this.storeEpoch;
    this.storeEpoch = snapshot.epoch;
    if (reset) this.beginStoreRefill();
    const live = new Set<PoolKey>();
    this.view.batch(() => {
      for (const { key, registration, deadlineMs } of snapshot.records) {
        live.add(key);
        this.directory.send(key, { type: 'LEASE_UPSERT', registration, deadlineMs });
      }
      // Pools the store no longer holds lapsed meanwhile, unless the store lost its data: then their
      // PoolRelays are still renewing them and hold them until the refill has had one lease.
      if (this.storeRefill) return;
      for (const [key, context] of this.directory.contexts()) {
        if (context.lease === 'live' && !live.has(key)) this.directory.send(key, { type: 'LEASE_LAPSED' });
      }
    });
    if (this.refillEnding && !this.storeRefill) {
      this.refillEnding = false;
      this.setSource({ name: 'warmup', synced: true });
    }
  }

  /**
   * The store came back without its data (a Redis restarted without persistence, a failover that lost
   * writes): like a restarted memory store, it is incomplete for one lease while PoolRelays re-register,
   * and pools missing from it are held, not dropped. Then a fresh snapshot decides.
   */
  private beginStoreRefill(): void {
    if (this.storeRefill) clearTimeout(this.storeRefill);
    const until = new Date((this.options.now ?? Date.now)() + this.options.leaseMs).toISOString();
    this.options.logger.warn({ until }, 'the store lost its data (its epoch changed); holding every pool for one lease while PoolRelays re-register');
    this.setSource({
      name: 'warmup',
      synced: false,
      reason: `store lost its data: leases still being renewed may be missing until ${until}`,
    });
    this.storeRefill = setTimeout(() => {
      this.storeRefill = undefined;
      this.refillEnding = true;
      this.feed.resnapshot();
    }, this.options.leaseMs);
    this.storeRefill.unref();
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
export function listedPool(snapshot: PoolSnapshot): ListedPool | null {
  const state = snapshot.value as PoolState;
  const context = snapshot.context;
  if (!LISTED.has(state) || !context.registration) return null;
  const { registration } = context;
  const { cluster_id, namespace, name } = parsePoolKey(context.key);
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
  };
}
