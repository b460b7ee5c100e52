// The EndpointSlice list/watch loop behind the SliceSource (docs/design.md "Watch loops").
// List, remember the list's resourceVersion, watch from it with bookmarks. A 410 (HTTP or in-stream) or an
// unparsable line relists after a backoff of its own, and the relist replaces the whole view through
// `resync` (what vanished leaves without a per-pool update). Any other failure, a watch silent for 90 s
// included, re-watches from the last resourceVersion after a capped, jittered backoff; the stock informer of
// @kubernetes/client-node 1.4.0 would stop for good instead. What each step comes to (relist, re-watch, back
// off, and with what reason) is decided in watch-outcome.ts. The loop itself is supervised: an unexpected
// exception restarts it (a fresh view, a relist) after a backoff, and the listener hears it is down meanwhile.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Backoff, sleep as realSleep, type BackoffOptions } from '../util/backoff.js';
import type { NamingOptions } from './naming.js';
import { QuietResetBackoff } from './quiet-reset-backoff.js';
import { asError, SliceApi, type WatchEnd } from './slice-api.js';
import { PoolSliceView, type PoolUpdate } from './slice-view.js';
import type { SliceSource, SliceSourceListener } from './types.js';
import { parseWatchLine } from './watch-event.js';
import {
  classifyWatch,
  listFailureReason,
  relists,
  watchRecovered,
  type WatchOutcome,
  type WatchProblem,
} from './watch-outcome.js';

export { MIN_QUIET_WATCH_MS } from './watch-outcome.js';

export interface SliceSourceBackoff extends BackoffOptions {
  /** The wait between attempts (injectable so tests need not sleep); must end early when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface SliceSourceOptions extends NamingOptions {
  /** Each warning logged about a frontend slice without the named port (for metrics). */
  onWarning?: (kind: 'frontend_slice_without_port') => void;
  kubeConfig: KubeConfig;
  /** `--frontend-port-name` */
  frontendPortName: string;
  /** `--router-port-name`, with `routerServiceName`: the Global Router Service's routers are read too. */
  routerPortName?: string;
  /** Watch one namespace only; all namespaces when undefined. */
  namespace?: string;
  logger: Logger;
  /** Default: 0.8 s doubling to 30 s, with jitter. */
  backoff?: SliceSourceBackoff;
  /**
   * After a re-watch (not a fresh list) the source reports synced on the watch's first event or bookmark, or
   * once it has been open this long without an error: a server answers a too-old resourceVersion with
   * HTTP 200 and then a 410 line, and the view must not look complete in between. Default 250 ms.
   */
  rewatchGraceMs?: number;
  /** `timeoutSeconds` asked of each watch; default a random 5-10 min, as client-go's reflector. */
  watchTimeoutSeconds?: () => number;
  /** A list not read in full after this long is abandoned and retried (default 30 s). */
  listTimeoutMs?: number;
  /**
   * A watch that delivers no line for this long (no event, not even a bookmark) is restarted from its last
   * resourceVersion (default 90 s: the API server's watch cache sends a bookmark about once a minute).
   */
  watchIdleTimeoutMs?: number;
}

export interface SliceSourceStats {
  /** Successful lists (the first one and every relist). */
  lists: number;
  /** Watches the server accepted. */
  watches: number;
  /** Watches that ended in 410 (HTTP or in-stream). */
  expired: number;
  /** Watch lines that were not a valid event (each one causes a relist). */
  unparsableLines: number;
  /** Watch lines longer than the limit, closed unread (each one causes a relist). */
  oversizedLines: number;
  /** List items that did not read as an EndpointSlice (skipped). */
  invalidListItems: number;
  /** Failed lists and watches (each one followed by a backoff). */
  failures: number;
  /** Times the loop failed on an unexpected error and was restarted. */
  loopRestarts: number;
  /** Where the next watch starts; undefined until listed, and while a relist is due. */
  resourceVersion: string | undefined;
  synced: boolean;
}

export type KubeSliceSource = SliceSource & { readonly stats: Readonly<SliceSourceStats> };

export function createSliceSource(options: SliceSourceOptions): KubeSliceSource {
  return new EndpointSliceLoop(options);
}

const DEFAULT_REWATCH_GRACE_MS = 250;
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 90_000;

class EndpointSliceLoop implements SliceSource {
  readonly stats: SliceSourceStats = {
    lists: 0,
    watches: 0,
    expired: 0,
    unparsableLines: 0,
    oversizedLines: 0,
    invalidListItems: 0,
    failures: 0,
    loopRestarts: 0,
    resourceVersion: undefined,
    synced: false,
  };
  private readonly api: SliceApi;
  private view: PoolSliceView;
  /** Lists and re-watches after a failure; starts over once the source has recovered. */
  private readonly backoff: Backoff;
  /** Relists after a 410 or an unparsable line. */
  private readonly relistBackoff: QuietResetBackoff;
  /** Restarts of the loop after an unexpected error. */
  private readonly restartBackoff: QuietResetBackoff;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly logger: Logger;
  private readonly abort = new AbortController();
  private listener: SliceSourceListener | undefined;
  private running: Promise<void> | undefined;
  private lastStatus: { synced: boolean; reason: string | undefined } | undefined;
  /** Why the loop is down (failed unexpectedly, restarting); cleared when the restarted loop is synced. */
  private down: string | undefined;

  constructor(private readonly options: SliceSourceOptions) {
    this.logger = options.logger;
    this.api = new SliceApi({
      kubeConfig: options.kubeConfig,
      namespace: options.namespace,
      listTimeoutMs: options.listTimeoutMs,
    });
    this.view = this.createView();
    this.backoff = new Backoff(options.backoff);
    this.relistBackoff = new QuietResetBackoff(options.backoff);
    this.restartBackoff = new QuietResetBackoff(options.backoff);
    this.sleep = options.backoff?.sleep ?? realSleep;
  }

  start(listener: SliceSourceListener): void {
    if (this.running) throw new Error('the EndpointSlice source is already started');
    this.listener = listener;
    this.running = this.supervise().catch((error: unknown) => {
      // Only if logging or the listener failed inside the supervisor itself. Say so rather than go quiet.
      const message = `stopped on an unexpected error: ${asError(error).message}`;
      this.logger.error({ err: asError(error) }, 'EndpointSlice source stopped on an unexpected error');
      this.report(false, message);
      this.notify((l) => l.loopDown(`EndpointSlice loop ${message}`));
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private get rewatchGraceMs(): number {
    return this.options.rewatchGraceMs ?? DEFAULT_REWATCH_GRACE_MS;
  }

  private get signal(): AbortSignal {
    return this.abort.signal;
  }

  private createView(): PoolSliceView {
    const { options } = this;
    return new PoolSliceView({
      mode: options.mode,
      relayServiceSuffix: options.relayServiceSuffix,
      frontendServiceSuffix: options.frontendServiceSuffix,
      frontendPortName: options.frontendPortName,
      routerServiceName: options.routerServiceName,
      routerPortName: options.routerPortName,
      logger: options.logger,
      onWarning: options.onWarning,
    });
  }

  /**
   * Runs the loop until the source stops. An exception that escapes it (a defect, or a dependency such as
   * the warning hook that throws) restarts it after a backoff with a fresh view and a relist; the listener
   * hears the loop is down until the restarted loop is synced (/healthz, docs/operations.md "Probes").
   */
  private async supervise(): Promise<void> {
    while (!this.signal.aborted) {
      try {
        await this.run();
        return;
      } catch (error) {
        if (this.signal.aborted) return;
        const err = asError(error);
        const delayMs = this.restartBackoff.next();
        this.stats.loopRestarts += 1;
        this.logger.error({ err, retry_in_ms: delayMs }, 'EndpointSlice loop failed unexpectedly; restarting it');
        this.down = `EndpointSlice loop failed unexpectedly (${err.message.split('\n')[0]?.slice(0, 200)}); restarting in ${delayMs} ms`;
        this.report(false, this.down);
        this.notify((l) => l.loopDown(this.down));
        await this.sleep(delayMs, this.signal);
        this.view = this.createView();
      }
    }
  }

  private async run(): Promise<void> {
    this.report(false, 'listing EndpointSlices');
    let resume: string | undefined;
    while (!this.signal.aborted) {
      let step: { resume?: string; retryReason?: string; relist?: boolean };
      if (resume === undefined) {
        const listed = await this.list();
        step = listed.resourceVersion === undefined ? listed : await this.watch(listed.resourceVersion, { afterList: true });
      } else {
        step = await this.watch(resume, { afterList: false });
      }
      resume = step.resume;
      this.stats.resourceVersion = resume;
      if (step.retryReason !== undefined && !this.signal.aborted) {
        const delayMs = step.relist ? this.relistBackoff.next() : this.backoff.next();
        this.report(false, `${step.retryReason}; retrying in ${delayMs} ms`);
        await this.sleep(delayMs, this.signal);
      }
    }
  }

  private async list(): Promise<{ resourceVersion?: string; retryReason?: string }> {
    let list;
    try {
      list = await this.api.list(this.signal);
    } catch (error) {
      if (this.signal.aborted) return {};
      this.stats.failures += 1;
      const reason = listFailureReason(error);
      this.logger.warn({ err: asError(error), path: this.api.path }, reason);
      return { retryReason: reason };
    }
    this.stats.lists += 1;
    this.stats.resourceVersion = list.resourceVersion;
    for (const { item, error } of list.invalid) {
      this.stats.invalidListItems += 1;
      this.logger.warn({ slice: item, error }, 'listed EndpointSlice skipped: it does not read as an EndpointSlice');
    }
    const pools = this.view.relist(list.slices);
    this.notify((listener) => listener.resync(pools));
    this.notifyRouters();
    // A full read is the source synced again: the backoff starts over.
    this.backoff.reset();
    this.logger.info(
      { slices: list.slices.length, pools: pools.size, resource_version: list.resourceVersion },
      'EndpointSlices listed',
    );
    return { resourceVersion: list.resourceVersion };
  }

  private async watch(from: string, context: { afterList: boolean }): Promise<WatchOutcome & { relist: boolean }> {
    let resume = from;
    let delivered = false;
    let problem: WatchProblem | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let openedAt: number | undefined;
    const startedAt = Date.now();
    const onDelivered = () => {
      if (delivered) return;
      delivered = true;
      // As kube-rs' StreamBackoff: a watch that delivers has recovered, so the next failure waits little.
      this.backoff.reset();
      this.report(true);
    };

    const timeoutSeconds = (this.options.watchTimeoutSeconds ?? randomWatchTimeout)();
    // A rejection is the reader's own failure (the loop's code threw): the supervisor restarts the loop.
    const end: WatchEnd = await this.api.watch({
      resourceVersion: from,
      signal: this.signal,
      timeoutSeconds,
      idleTimeoutMs: this.options.watchIdleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS,
      onOpen: () => {
        this.stats.watches += 1;
        openedAt = Date.now();
        if (context.afterList) this.report(true);
        else graceTimer = setTimeout(() => this.report(true), this.rewatchGraceMs);
      },
      onLine: (line) => {
        const parsed = parseWatchLine(line);
        if (parsed.kind === 'event') {
          resume = parsed.slice.metadata.resourceVersion || resume;
          this.stats.resourceVersion = resume;
          onDelivered();
          this.notifyUpdates(this.view.apply({ type: parsed.type, slice: parsed.slice }));
          return true;
        }
        if (parsed.kind === 'bookmark') {
          resume = parsed.resourceVersion;
          this.stats.resourceVersion = resume;
          onDelivered();
          return true;
        }
        problem = parsed;
        if (parsed.kind === 'unparsable') {
          this.stats.unparsableLines += 1;
          this.logger.warn({ why: parsed.why, line: line.slice(0, 200) }, 'unparsable EndpointSlice watch line');
        }
        return false;
      },
    }).finally(() => clearTimeout(graceTimer));
    if (watchRecovered(openedAt === undefined ? undefined : Date.now() - openedAt, this.rewatchGraceMs)) {
      this.backoff.reset();
    }
    const outcome = classifyWatch(end, problem, { resume, delivered, elapsedMs: Date.now() - startedAt });
    this.record(outcome, resume);
    return { ...outcome, relist: relists(outcome) };
  }

  /**
   * Counts and logs what a watch from `resourceVersion` (its last) came to; an unparsable line was counted
   * and logged as it arrived.
   */
  private record(outcome: WatchOutcome, resourceVersion: string): void {
    const fields = { resource_version: resourceVersion };
    switch (outcome.kind) {
      case 'expired':
        this.stats.expired += 1;
        this.logger.info(fields, 'EndpointSlice watch expired (410): relisting');
        return;
      case 'failed':
      case 'ended_early':
        this.stats.failures += 1;
        this.logger.warn(fields, outcome.retryReason);
        return;
      case 'ended':
        this.logger.debug(fields, 'EndpointSlice watch ended; watching again');
        return;
      case 'line_too_long':
        this.stats.oversizedLines += 1;
        this.logger.warn({ ...fields, limit_bytes: outcome.limitBytes }, 'EndpointSlice watch line longer than the limit; relisting');
        return;
      case 'aborted':
      case 'unparsable':
        return;
    }
  }

  private notifyUpdates(updates: readonly PoolUpdate[]): void {
    for (const { key, endpoints } of updates) this.notify((listener) => listener.update(key, endpoints));
    this.notifyRouters();
  }

  /** The routers, whole, when they changed (only with a Global Router Service to read). */
  private notifyRouters(): void {
    if (this.options.routerServiceName === undefined || !this.view.routersChanged()) return;
    const routers = this.view.routers();
    this.notify((listener) => listener.routers?.(routers));
  }

  private report(synced: boolean, reason?: string): void {
    if (this.signal.aborted && synced) return;
    if (synced && this.down !== undefined) {
      this.down = undefined;
      this.notify((l) => l.loopDown(undefined));
    }
    const last = this.lastStatus;
    if (last && last.synced === synced && last.reason === reason) return;
    this.lastStatus = { synced, reason };
    this.stats.synced = synced;
    this.notify((listener) => listener.status(synced, reason));
  }

  /** A listener that throws must not stop the loop. */
  private notify(call: (listener: SliceSourceListener) => void): void {
    if (!this.listener) return;
    try {
      call(this.listener);
    } catch (error) {
      this.logger.error({ err: asError(error) }, 'EndpointSlice listener failed');
    }
  }
}

function randomWatchTimeout(): number {
  return 300 + Math.floor(Math.random() * 300);
}
