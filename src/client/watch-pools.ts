// watchPools(): a router's live view of the listed pools. Follows GET /pools/watch on one replica at a
// time, moves to the next when it fails, backs off when all have, and polls GET /pools where something
// on the path cuts event streams (a buffering proxy), trying the stream again now and then. Every list
// is applied under the caller merge rule, extended with regions (pool-map.ts, docs/contract.md §7).
// Back on the same replica it resumes the stream after the last revision it applied (Last-Event-ID), and
// it polls with the last list's ETag, keeping its list on a 304 (docs/contract.md §5).
import { pino, type Logger } from 'pino';
import type { z } from 'zod';
import type { ListedPool, ListedRouter, PoolId, PoolKey, RegionStatus, RouterList } from '../contract/index.js';
import { poolKey, poolListSchema, routerListSchema, routerWatchEventSchemas, watchEventSchemas } from '../contract/index.js';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.js';
import { readPoolList, type ReplicaFailure } from './get-pools.js';
import { HttpTransport, type HttpTransportOptions } from './http-transport.js';
import { PoolMap, type PoolChange } from './pool-map.js';
import { RouterMap, type RouterChange } from './router-map.js';
import { ReplicaRotation } from './replica-rotation.js';
import { runSseSession, type SessionEnd } from './sse-session.js';
import type { PoolWatch, RouterWatch, WatchPoolsOptions, WatchStatus, WatchTransport } from './watch-types.js';

export type { PoolChange } from './pool-map.js';
export type { PoolWatch, RouterWatch, WatchPoolsOptions, WatchStatus, WatchTransport } from './watch-types.js';

/**
 * Follows the listed pools of a poolscope service and keeps a merged view of them.
 *
 * ```ts
 * const watch = watchPools({ servers: ['http://poolscope-0:8080', 'http://poolscope-1:8080'] });
 * watch.onChange((change) => console.info(change.type, change.key));
 * await watch.ready;
 * const llamas = watch.byModel('meta-llama/Llama-3.1-70B-Instruct');
 * ```
 *
 * On a `resync` or a polled list with `complete: false` it keeps the pools it knows that the list does
 * not name; it removes a pool only on a complete list or a `delete` event (docs/contract.md §5), or, with
 * regions, on a list in which every region of the pool's `lease_regions` is `complete` or `dropped`
 * (docs/contract.md §7).
 *
 * @throws TypeError when `servers` is empty or holds something other than an http(s) URL.
 */
export function watchPools(options: WatchPoolsOptions): PoolWatch {
  return new PoolWatcher(options).start();
}

/**
 * Follows the routers of a poolscope service (GET /routers/watch, else polling GET /routers) with the
 * options, failover, resume and merge rule of watchPools.
 */
export function watchRouters(options: WatchPoolsOptions): RouterWatch {
  return new RouterWatcher(options).start();
}

/** What a watcher follows: its path, its schemas, and how its events change the view. */
interface Followed<Item, Change> {
  /** `/pools` or `/routers`. */
  path: string;
  what: string;
  listSchema: z.ZodType;
  eventSchemas: Record<'resync' | 'upsert' | 'delete', z.ZodType>;
  map: {
    applyList(list: { complete: boolean; regions?: RegionStatus[] }): Change[];
    upsert(item: Item): Change[];
    remove(id: never): Change[];
  };
  /** The item of an `upsert` event's data, the id of a `delete` event's. */
  upserted(data: unknown): Item;
  deleted(data: unknown): unknown;
}

/** The one watch loop of both lists: one replica at a time, failover, polling, resume, the merge rule. */
class ListWatcher<Item, Change> {
  private readonly rotation: ReplicaRotation;
  private readonly transport: HttpTransport;
  private readonly logger: Logger;
  private readonly backoff: Backoff;
  private readonly changeListeners = new Set<(change: Change) => void>();
  private readonly statusListeners = new Set<(status: WatchStatus) => void>();
  private readonly stop = new AbortController();
  private readonly settings: Required<
    Pick<WatchPoolsOptions, 'pollIntervalMs' | 'sseRetryIntervalMs' | 'requestTimeoutMs' | 'firstEventTimeoutMs' | 'idleTimeoutMs'>
  >;
  private current: WatchStatus;
  /** The replica and revision of the last event or list applied: the stream resumes there on that replica. */
  private applied: { server: string; revision: string; complete: boolean } | undefined;
  /** The ETag of the last list polled, while nothing else was applied since (only that list is held). */
  private polled: { server: string; etag: string } | undefined;
  private loop: Promise<void> = Promise.resolve();
  private markReady!: () => void;
  readonly ready: Promise<void>;

  constructor(
    options: WatchPoolsOptions,
    protected readonly followed: Followed<Item, Change>,
  ) {
    this.rotation = new ReplicaRotation({ servers: options.servers, random: options.random });
    this.transport = new HttpTransport(options);
    this.logger = options.logger ?? pino({ level: 'silent' });
    this.backoff = new Backoff({ initialMs: 500, maxMs: 30_000, jitter: 0.5, random: options.random, ...options.backoff });
    this.settings = {
      pollIntervalMs: options.pollIntervalMs ?? 5000,
      sseRetryIntervalMs: options.sseRetryIntervalMs ?? 60_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 5000,
      firstEventTimeoutMs: options.firstEventTimeoutMs ?? 10_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 45_000,
    };
    this.current = { server: this.rotation.current, transport: 'disconnected', complete: false, revision: undefined, regions: undefined, failure: undefined };
    this.ready = new Promise((resolve) => (this.markReady = resolve));
  }

  start(): this {
    this.loop = this.run().catch((error: unknown) => {
      this.logger.error({ err: error }, `${this.followed.what} watch stopped on an unexpected error`);
    });
    return this;
  }

  get status(): WatchStatus {
    return { ...this.current, regions: this.current.regions?.map((region) => ({ ...region })) };
  }

  onChange(listener: (change: Change) => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  onStatus(listener: (status: WatchStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => void this.statusListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
    this.transport.close();
    this.markReady();
  }

  private async run(): Promise<void> {
    let pollUntil = 0;
    while (!this.stop.signal.aborted) {
      const server = this.rotation.current;
      if (Date.now() < pollUntil) {
        if (await this.pollOnce(server)) await sleep(this.settings.pollIntervalMs, this.stop.signal);
        continue;
      }
      const startedAt = Date.now();
      // Only the replica that issued a revision can resume after it (another one answers with a resync).
      const resumeFrom = this.applied?.server === server ? this.applied : undefined;
      const end = await runSseSession({
        transport: this.transport,
        server,
        logger: this.logger,
        connectTimeoutMs: this.settings.requestTimeoutMs,
        firstEventTimeoutMs: this.settings.firstEventTimeoutMs,
        idleTimeoutMs: this.settings.idleTimeoutMs,
        signal: this.stop.signal,
        path: this.followed.path,
        eventSchemas: this.followed.eventSchemas,
        ...(resumeFrom === undefined ? {} : { lastEventId: resumeFrom.revision }),
        // No resync comes, and completeness is as the last list had it (a change of it sends a resync).
        onResumed: () => this.setStatus({ server, transport: 'sse', complete: resumeFrom!.complete }),
        onEvent: (event) => this.apply(event, server),
      });
      if (end.kind === 'stopped') break;
      // A refused event: reconnect from scratch, with a resync.
      if (end.kind === 'invalid') this.applied = undefined;
      this.setStatus({ transport: 'disconnected', complete: false });
      if (end.kind === 'not-sse') {
        // Is it the replica, or only its event stream? A working GET /pools says the path cuts streams.
        if (await this.pollOnce(server)) {
          this.logger.warn({ server, reason: end.reason }, `event stream unavailable; polling GET ${this.followed.path}`);
          pollUntil = Date.now() + this.settings.sseRetryIntervalMs;
          await sleep(this.settings.pollIntervalMs, this.stop.signal);
        }
        continue;
      }
      // A stream that worked for a while and ended (a replica draining, a proxy's idle cut): reconnect at
      // once, to the same replica first. One that never delivered a resync counts as a failure.
      const worked = end.kind === 'ended' && (end.resynced || end.resumed) && Date.now() - startedAt >= 1000;
      if (end.kind === 'ended') this.logger.info({ server, reason: end.reason }, 'watch stream ended');
      if (worked) {
        this.rotation.succeeded();
        this.backoff.reset();
      } else {
        await this.failOver(server, end);
      }
    }
    this.setStatus({ transport: 'disconnected', complete: false });
  }

  /** One GET of the list; applies it, or fails over. Returns whether it worked. */
  private async pollOnce(server: string): Promise<boolean> {
    const etag = this.polled?.server === server ? this.polled.etag : undefined;
    const reply = await readPoolList({
      transport: this.transport,
      server,
      path: this.followed.path,
      schema: this.followed.listSchema,
      timeoutMs: this.settings.requestTimeoutMs,
      signal: this.stop.signal,
      ...(etag === undefined ? {} : { etag }),
    });
    if (this.stop.signal.aborted) return false;
    if (!reply.ok) {
      this.setStatus({ transport: 'disconnected', complete: false });
      await this.failOver(server, { kind: 'unreachable', reason: reply.reason, ...(reply.tls === undefined ? {} : { tls: reply.tls }) }, reply.status);
      return false;
    }
    this.rotation.succeeded();
    this.backoff.reset();
    if (reply.list === undefined) {
      // 304: the list held is still the replica's, completeness included.
      this.setStatus({ server, transport: 'polling', complete: this.applied?.complete ?? false });
      return true;
    }
    this.apply({ kind: 'resync', data: reply.list }, server, 'polling');
    this.polled = reply.etag === undefined ? undefined : { server, etag: reply.etag };
    return true;
  }

  private async failOver(server: string, end: Exclude<SessionEnd, { kind: 'stopped' }>, status?: number): Promise<void> {
    const tls = end.kind === 'unreachable' ? end.tls : undefined;
    this.setStatus({ failure: { server, reason: end.reason, ...(status === undefined ? {} : { status }), ...(tls === undefined ? {} : { tls }) } });
    const roundFailed = this.rotation.failed();
    this.logger.warn({ server, reason: end.reason, next: this.rotation.current }, 'poolscope replica failed; trying the next');
    if (roundFailed) await sleep(this.backoff.next(), this.stop.signal);
  }

  private apply(
    event: { kind: 'resync'; data: { complete: boolean; revision: string; regions?: RegionStatus[] } } | { kind: 'upsert' | 'delete'; data: { revision: string } },
    server: string,
    transport: WatchTransport = 'sse',
  ): void {
    let changes: Change[];
    this.polled = undefined;
    const { map } = this.followed;
    if (event.kind === 'resync') {
      changes = map.applyList(event.data);
      const { complete, revision, regions } = event.data;
      this.applied = { server, revision, complete };
      this.setStatus({ server, transport, complete, revision, regions });
    } else {
      changes = event.kind === 'upsert' ? map.upsert(this.followed.upserted(event.data)) : map.remove(this.followed.deleted(event.data) as never);
      this.applied = { server, revision: event.data.revision, complete: this.applied?.complete ?? false };
      this.setStatus({ server, transport, revision: event.data.revision });
    }
    for (const change of changes) this.emit(this.changeListeners, change);
    if (event.kind === 'resync') this.markReady();
  }

  private setStatus(update: Partial<WatchStatus>): void {
    // Serving again clears the last failure.
    const serving = update.transport === 'sse' || update.transport === 'polling';
    const next = { ...this.current, ...update, ...(serving ? { failure: undefined } : {}) };
    const changed =
      next.server !== this.current.server ||
      next.transport !== this.current.transport ||
      next.complete !== this.current.complete ||
      next.failure?.reason !== this.current.failure?.reason ||
      JSON.stringify(next.regions) !== JSON.stringify(this.current.regions);
    this.current = next;
    if (changed) this.emit(this.statusListeners, this.status);
  }

  private emit<T>(listeners: Set<(value: T) => void>, value: T): void {
    for (const listener of listeners) {
      try {
        listener(value);
      } catch (error) {
        this.logger.error({ err: error }, `a ${this.followed.what} watch listener threw`);
      }
    }
  }
}

class PoolWatcher extends ListWatcher<ListedPool, PoolChange> implements PoolWatch {
  private readonly map: PoolMap;

  constructor(options: WatchPoolsOptions) {
    const map = new PoolMap();
    super(options, {
      path: '/pools',
      what: 'pool',
      listSchema: poolListSchema,
      eventSchemas: watchEventSchemas,
      map: map as Followed<ListedPool, PoolChange>['map'],
      upserted: (data) => (data as { pool: ListedPool }).pool,
      deleted: (data) => (data as { pool: PoolId }).pool,
    });
    this.map = map;
  }

  get pools(): ReadonlyMap<PoolKey, ListedPool> {
    return this.map.view;
  }

  get(id: PoolKey | PoolId): ListedPool | undefined {
    return this.map.get(typeof id === 'string' ? id : poolKey(id));
  }

  byModel(model: string): ListedPool[] {
    return this.map.byModel(model);
  }
}

class RouterWatcher extends ListWatcher<ListedRouter, RouterChange> implements RouterWatch {
  private readonly map: RouterMap;

  constructor(options: WatchPoolsOptions) {
    const map = new RouterMap();
    super(options, {
      path: '/routers',
      what: 'router',
      listSchema: routerListSchema,
      eventSchemas: routerWatchEventSchemas,
      map: {
        applyList: (list) => map.applyList(list as RouterList),
        upsert: (router) => map.upsert(router),
        remove: (id: never) => map.remove((id as { id: string }).id),
      },
      upserted: (data) => (data as { router: ListedRouter }).router,
      deleted: (data) => (data as { router: { id: string } }).router,
    });
    this.map = map;
  }

  get routers(): ReadonlyMap<string, ListedRouter> {
    return this.map.view;
  }
}
