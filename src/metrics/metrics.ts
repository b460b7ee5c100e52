// GET /metrics: the service's Prometheus metrics (docs/contract.md §5, docs/operations.md "Metrics"), in a Registry of its own (no
// prom-client global), so several services can run in one process (tests) without sharing counters.
// Counters are moved by hooks the service calls; gauges are read from the join when scraped.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { POOL_STATES, type PoolState } from '../contract/index.js';
import type { Join } from '../join/join.js';
import type { RouterJoin } from '../join/router-join.js';
import { WARNING_KINDS, type WarningKind } from '../join/warnings.js';
import { LimitMetrics, WATCH_STREAMS } from './limit-metrics.js';

export type HeartbeatOutcome = 'ok' | 'invalid' | 'unauthorized' | 'forbidden' | 'unavailable' | 'aborted';
export const HEARTBEAT_OUTCOMES: readonly HeartbeatOutcome[] = ['ok', 'invalid', 'unauthorized', 'forbidden', 'unavailable', 'aborted'];

/** Store commands are milliseconds when healthy and bounded by the command timeout (1 s by default). */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export interface ServiceMetricsOptions {
  /** Also collect prom-client's default process metrics (default true). */
  processMetrics?: boolean;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  /** Watch streams and connections against their limits (docs/contract.md §8). */
  readonly limits: LimitMetrics;
  private join: Join | undefined;
  private routers: RouterJoin | undefined;
  private readonly heartbeats: Counter<'outcome'>;
  private readonly lapses: Counter;
  private readonly warnings: Counter<'kind'>;
  private readonly storeSeconds: Histogram<'command' | 'outcome'>;
  private readonly regionDrops: Counter<'region'>;
  private readonly storeOutages: Counter<'region'>;
  private readonly kubeLoopRestarts: Counter;

  constructor(options: ServiceMetricsOptions = {}) {
    const registers = [this.registry];
    const metrics = this;
    new Gauge({
      name: 'poolscope_pools',
      help: 'Pools this replica holds, by state (absent: kept for /debug after it left).',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = new Map<PoolState, number>(POOL_STATES.map((s) => [s, 0]));
        for (const context of metrics.join?.directory.contexts().values() ?? []) {
          counts.set(context.state, (counts.get(context.state) ?? 0) + 1);
        }
        for (const [state, n] of counts) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'poolscope_model_pools',
      help: 'Listed pools (live and frontendless) this replica holds, by model.',
      labelNames: ['model'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, number>();
        for (const context of metrics.join?.directory.contexts().values() ?? []) {
          if (context.state !== 'live' && context.state !== 'frontendless') continue;
          const model = context.registration?.model;
          if (model !== undefined) counts.set(model, (counts.get(model) ?? 0) + 1);
        }
        for (const [model, n] of counts) this.set({ model }, n);
      },
    });
    new Gauge({
      name: 'poolscope_routers',
      help: 'Routers this replica lists (docs/contract.md §10), by source (registration, static, mcs) and region (the router\'s own; "" when it names none).',
      labelNames: ['source', 'region'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, { source: string; region: string; n: number }>();
        for (const router of metrics.routers?.view.list().routers ?? []) {
          const region = router.region ?? '';
          const key = `${router.source}\0${region}`;
          const entry = counts.get(key) ?? { source: router.source, region, n: 0 };
          entry.n += 1;
          counts.set(key, entry);
        }
        for (const { source, region, n } of counts.values()) this.set({ source, region }, n);
      },
    });
    this.limits = new LimitMetrics(registers);
    this.heartbeats = new Counter({
      name: 'poolscope_heartbeats_total',
      help: 'POST /pools requests, by outcome (ok, invalid, unauthorized, forbidden: outside its scopes, unavailable, aborted: the client left mid-body).',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of HEARTBEAT_OUTCOMES) this.heartbeats.inc({ outcome }, 0);
    this.lapses = new Counter({
      name: 'poolscope_lapses_total',
      help: 'Leases this replica saw lapse (a pool whose lease was live and no longer is).',
      registers,
    });
    this.warnings = new Counter({
      name: 'poolscope_warnings_total',
      help: 'Warnings logged, by kind.',
      labelNames: ['kind'],
      registers,
    });
    for (const kind of WARNING_KINDS) this.warnings.inc({ kind }, 0);
    this.storeSeconds = new Histogram({
      name: 'poolscope_store_command_seconds',
      help: 'Latency of registration store commands, by command and outcome (ok, error).',
      labelNames: ['command', 'outcome'],
      buckets: STORE_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'poolscope_watch_subscribers',
      help: 'Open event streams, by stream (pools: GET /pools/watch, debug: /debug/pools/watch).',
      labelNames: ['stream'],
      registers,
      collect() {
        for (const stream of WATCH_STREAMS) this.set({ stream }, metrics.limits.watchers.get(stream)?.size ?? 0);
      },
    });
    new Gauge({
      name: 'poolscope_source_synced',
      help: 'Whether each source is synced (1) or not (0); while any is 0, GET /pools answers complete: false.',
      labelNames: ['source'],
      registers,
      collect() {
        this.reset();
        for (const source of metrics.join?.sourceStatuses() ?? []) this.set({ source: source.name }, source.synced ? 1 : 0);
      },
    });
    // Regions (docs/contract.md §7): not exported without them (the one store is `poolscope_source_synced{source="store"}`).
    const regions = () => (metrics.join?.hasRegions ? metrics.join.regionStatuses() : []);
    new Gauge({
      name: 'poolscope_region_synced',
      help: 'Whether each region is read in full and followed (1) or not (0): unreachable, held, dropped or refilling.',
      labelNames: ['region'],
      registers,
      collect() {
        this.reset();
        for (const r of regions()) this.set({ region: r.name }, r.readable && r.refillUntilMs === undefined ? 1 : 0);
      },
    });
    new Gauge({
      name: 'poolscope_region_read_age_seconds',
      help: "Seconds since each region's store last answered a read (a snapshot, its change log, its due deadlines).",
      labelNames: ['region'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        for (const r of regions()) {
          if (r.lastReadAtMs !== undefined) this.set({ region: r.name }, Math.max(0, now - r.lastReadAtMs) / 1000);
        }
      },
    });
    // Outages of each region's store (docs/contract.md §9); without regions the one store is region="".
    this.storeOutages = new Counter({
      name: 'poolscope_store_outages_total',
      help: "Outages of each region's store (frozen, down, failing over, cut off from its writers) that its writers recorded, as this replica learned of them.",
      labelNames: ['region'],
      registers,
    });
    new Gauge({
      name: 'poolscope_store_renewal_window_open',
      help: "Whether the renewal window after the last outage of each region's store is open (1): leases that ran out in the outage are not lapsed before it has run.",
      labelNames: ['region'],
      registers,
      collect() {
        this.reset();
        for (const r of metrics.join?.regionStatuses() ?? []) this.set({ region: r.name }, r.renewalWindowOpen ? 1 : 0);
      },
    });
    this.regionDrops = new Counter({
      name: 'poolscope_region_dropped_total',
      help: "Times a region could not be read for longer than --region-hold-secs and its pools were dropped.",
      labelNames: ['region'],
      registers,
    });
    // The stores count these themselves (every region's store, summed); read when scraped.
    const storeCounter = (name: string, help: string, read: (join: Join) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(metrics.join ? read(metrics.join) : 0);
        },
      });
    storeCounter(
      'poolscope_store_reconnects_total',
      'Times a store connection was opened again after it was lost or dropped as dead (a command timed out on it).',
      (join) => join.storeStats().reconnects,
    );
    storeCounter(
      'poolscope_store_unreadable_entries_total',
      'Store entries this version cannot read (a change log entry, a pool hash), each logged and skipped.',
      (join) => join.storeStats().unreadableEntries,
    );
    this.kubeLoopRestarts = new Counter({
      name: 'poolscope_kube_loop_restarts_total',
      help: 'Times the EndpointSlice list/watch loop failed on an unexpected error and was restarted (mcs/karmada modes).',
      registers,
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Read pools, subscribers, sources and regions from this join when scraped. */
  /** The routers' join, read by poolscope_routers when scraped. */
  observeRouters(routers: RouterJoin): void {
    this.routers = routers;
  }

  observe(join: Join): void {
    this.join = join;
    for (const r of join.hasRegions ? join.regionStatuses() : []) this.regionDrops.inc({ region: r.name }, 0);
    for (const r of join.regionStatuses()) this.storeOutages.inc({ region: r.name }, 0);
  }

  /** An outage of a region's store (its writers recorded it; docs/contract.md §9). */
  readonly countStoreOutage = (region: string): void => {
    this.storeOutages.inc({ region });
  };

  readonly countRegionDrop = (region: string): void => {
    this.regionDrops.inc({ region });
  };

  readonly countKubeLoopRestart = (): void => {
    this.kubeLoopRestarts.inc();
  };

  readonly countHeartbeat = (outcome: HeartbeatOutcome): void => {
    this.heartbeats.inc({ outcome });
  };

  readonly countLapse = (): void => {
    this.lapses.inc();
  };

  readonly countWarning = (kind: WarningKind): void => {
    this.warnings.inc({ kind });
  };

  readonly observeStoreCommand = (command: string, outcome: 'ok' | 'error', seconds: number): void => {
    this.storeSeconds.observe({ command, outcome }, seconds);
  };

  /** The Prometheus text exposition. */
  async text(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
