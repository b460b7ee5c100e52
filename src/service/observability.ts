// What operators look at, wired in one place: the metrics registry, the inspection of the pools' steps,
// and the feed of the /debug page. The service calls it in the order things are built:
// `instrument(store)`, then the join with `joinHooks`, then `attach(join)`, then the app with `appDeps()`.
import { poolMachine } from '../../machines/pool.machine.js';
import type { AppDeps } from '../http/app.js';
import type { Join, JoinOptions } from '../join/join.js';
import { instrumentStore } from '../metrics/instrumented-store.js';
import { ServiceMetrics } from '../metrics/metrics.js';
import type { RegistrationStore } from '../store/types.js';
import { DebugFeed } from '../debug/feed.js';
import { PoolInspector } from '../debug/inspector.js';
import { machineGraph } from '../debug/machine-graph.js';
import { loadPageBundle, type PageBundle } from '../debug/page-bundle.js';

export interface ObservabilityOptions {
  /** Default process metrics (default true). */
  processMetrics?: boolean;
  /** The built page; default: read from dist/debug-page. */
  bundle?: PageBundle;
  /** How long the /debug feed gathers changes before sending them (default 100 ms). */
  debugFlushMs?: number;
}

export class Observability {
  readonly metrics: ServiceMetrics;
  readonly inspector = new PoolInspector();
  private feed: DebugFeed | undefined;
  private readonly unsubscribeLapses: () => void;

  constructor(private readonly options: ObservabilityOptions = {}) {
    this.metrics = new ServiceMetrics({ processMetrics: options.processMetrics });
    this.unsubscribeLapses = this.inspector.subscribe((change) => {
      if (change.kind === 'snapshot' && change.leaseLapsed) this.metrics.countLapse();
    });
  }

  /** The store, timed per command, reporting the heartbeats it takes to the /debug feed. */
  instrument(store: RegistrationStore): RegistrationStore {
    return instrumentStore({
      store,
      observe: this.metrics.observeStoreCommand,
      onHeartbeat: (result) => this.feed?.noteHeartbeat(result.key),
    });
  }

  /** Options for the Join: warnings, region drops and EndpointSlice loop restarts counted, every pool's step inspected. */
  get joinHooks(): Pick<JoinOptions, 'onWarning' | 'inspect' | 'onRegionDropped' | 'onStoreOutage' | 'onSliceLoopRestart'> {
    return {
      onWarning: this.metrics.countWarning,
      inspect: this.inspector.inspect,
      onRegionDropped: this.metrics.countRegionDrop,
      onStoreOutage: this.metrics.countStoreOutage,
      onSliceLoopRestart: this.metrics.countKubeLoopRestart,
    };
  }

  attach(join: Join): DebugFeed {
    this.metrics.observe(join);
    this.feed = new DebugFeed({ join, inspector: this.inspector, graph: machineGraph(poolMachine), flushMs: this.options.debugFlushMs });
    return this.feed;
  }

  /** Options for createApp: /metrics, the /debug page and the heartbeat counter. */
  appDeps(): Pick<AppDeps, 'metrics' | 'debugPage' | 'onHeartbeat' | 'onWatchHub' | 'onWatchDropped' | 'onWatchRefused'> {
    if (!this.feed) throw new Error('Observability.attach(join) must come before appDeps()');
    return {
      metrics: this.metrics,
      debugPage: { feed: this.feed, bundle: this.options.bundle ?? loadPageBundle() },
      onHeartbeat: this.metrics.countHeartbeat,
      onWatchHub: this.metrics.limits.observeWatchers,
      onWatchDropped: this.metrics.limits.countWatchDrop,
      onWatchRefused: this.metrics.limits.countWatchRefused,
    };
  }

  stop(): void {
    this.unsubscribeLapses();
    this.feed?.stop();
  }
}
