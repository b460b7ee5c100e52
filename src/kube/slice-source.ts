// The EndpointSlice list/watch loop behind the SliceSource (docs/design.md "Watch loops").
// List, remember the list's resourceVersion, watch from it with bookmarks. A 410 (HTTP or in-stream) or an
// unparsable line relists, and the relist replaces the whole view through `resync` (what vanished leaves
// without a per-pool update). Any other failure re-watches from the last resourceVersion after a capped,
// jittered backoff; the stock informer of @kubernetes/client-node 1.4.0 would stop for good instead. What each
// step comes to (relist, re-watch, back off, and with what reason) is decided in watch-outcome.ts.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Backoff, sleep as realSleep, type BackoffOptions } from '../util/backoff.js';
import type { NamingOptions } from './naming.js';
import { asError, SliceApi, type WatchEnd } from './slice-api.js';
import { PoolSliceView, type PoolUpdate } from './slice-view.js';
import type { SliceSource, SliceSourceListener } from './types.js';
import { parseWatchLine } from './watch-event.js';
import {
  classifyWatch,
  listFailureReason,
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
  /** List items that did not read as an EndpointSlice (skipped). */
  invalidListItems: number;
  /** Failed lists and watches (each one followed by a backoff). */
  failures: number;
  /** Where the next watch starts; undefined until listed, and while a relist is due. */
  resourceVersion: string | undefined;
  synced: boolean;
}

export type KubeSliceSource = SliceSource & { readonly stats: Readonly<SliceSourceStats> };

export function createSliceSource(options: SliceSourceOptions): KubeSliceSource {
  return new EndpointSliceLoop(options);
}

const DEFAULT_REWATCH_GRACE_MS = 250;

class EndpointSliceLoop implements SliceSource {
  readonly stats: SliceSourceStats = {
    lists: 0,
    watches: 0,
    expired: 0,
    unparsableLines: 0,
    invalidListItems: 0,
    failures: 0,
    resourceVersion: undefined,
    synced: false,
  };
  private readonly api: SliceApi;
  private readonly view: PoolSliceView;
  private readonly backoff: Backoff;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly logger: Logger;
  private readonly abort = new AbortController();
  private listener: SliceSourceListener | undefined;
  private running: Promise<void> | undefined;
  private lastStatus: { synced: boolean; reason: string | undefined } | undefined;

  constructor(private readonly options: SliceSourceOptions) {
    this.logger = options.logger;
    this.api = new SliceApi({ kubeConfig: options.kubeConfig, namespace: options.namespace });
    this.view = new PoolSliceView({
      mode: options.mode,
      relayServiceSuffix: options.relayServiceSuffix,
      frontendServiceSuffix: options.frontendServiceSuffix,
      frontendPortName: options.frontendPortName,
      logger: options.logger,
      onWarning: options.onWarning,
    });
    this.backoff = new Backoff(options.backoff);
    this.sleep = options.backoff?.sleep ?? realSleep;
  }

  start(listener: SliceSourceListener): void {
    if (this.running) throw new Error('the EndpointSlice source is already started');
    this.listener = listener;
    this.running = this.run().catch((error: unknown) => {
      // Not expected: every request error is handled in the loop. Say so loudly rather than go quiet.
      this.logger.error({ err: asError(error) }, 'EndpointSlice source stopped on an unexpected error');
      this.report(false, `stopped on an unexpected error: ${asError(error).message}`);
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

  private async run(): Promise<void> {
    this.report(false, 'listing EndpointSlices');
    let resume: string | undefined;
    while (!this.signal.aborted) {
      let retryReason: string | undefined;
      if (resume === undefined) {
        const listed = await this.list();
        resume = listed.resourceVersion;
        retryReason = listed.retryReason;
        if (resume !== undefined) ({ resume, retryReason } = await this.watch(resume, { afterList: true }));
      } else {
        ({ resume, retryReason } = await this.watch(resume, { afterList: false }));
      }
      this.stats.resourceVersion = resume;
      if (retryReason !== undefined && !this.signal.aborted) {
        const delayMs = this.backoff.next();
        this.report(false, `${retryReason}; retrying in ${delayMs} ms`);
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
    // A full read is the source synced again: the backoff starts over.
    this.backoff.reset();
    this.logger.info(
      { slices: list.slices.length, pools: pools.size, resource_version: list.resourceVersion },
      'EndpointSlices listed',
    );
    return { resourceVersion: list.resourceVersion };
  }

  private async watch(from: string, context: { afterList: boolean }): Promise<WatchOutcome> {
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
    const end: WatchEnd = await this.api.watch({
      resourceVersion: from,
      signal: this.signal,
      timeoutSeconds,
      // The server ends the watch after timeoutSeconds; silence well past that is a dead connection.
      idleTimeoutMs: (timeoutSeconds + 60) * 1000,
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
    }).catch((error: unknown): WatchEnd => ({ kind: 'failed', error: asError(error) }));
    clearTimeout(graceTimer);
    if (watchRecovered(openedAt === undefined ? undefined : Date.now() - openedAt, this.rewatchGraceMs)) {
      this.backoff.reset();
    }
    const outcome = classifyWatch(end, problem, { resume, delivered, elapsedMs: Date.now() - startedAt });
    this.record(outcome, resume);
    return outcome;
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
      case 'aborted':
      case 'unparsable':
        return;
    }
  }

  private notifyUpdates(updates: readonly PoolUpdate[]): void {
    for (const { key, endpoints } of updates) this.notify((listener) => listener.update(key, endpoints));
  }

  private report(synced: boolean, reason?: string): void {
    if (this.signal.aborted && synced) return;
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
