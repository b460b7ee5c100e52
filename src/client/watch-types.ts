// The public types of a watch (watchPools, watchRouters in watch-pools.ts): its options, its status and
// the live views it keeps, apart from the loop that keeps them.
import type { Logger } from 'pino';
import type { ListedPool, ListedRouter, PoolId, PoolKey, RegionStatus } from '../contract/index.js';
import type { BackoffOptions } from '../util/backoff.js';
import type { ReplicaFailure } from './get-pools.js';
import type { HttpTransportOptions } from './http-transport.js';
import type { PoolChange } from './pool-map.js';
import type { RouterChange } from './router-map.js';

export interface WatchPoolsOptions extends HttpTransportOptions {
  /** Base URLs of poolscope replicas, e.g. `http://poolscope:8080`; the watch starts at a random one. */
  servers: readonly string[];
  /** pino logger for reconnects and refusals (default: silent). */
  logger?: Logger;
  /** Backoff between rounds in which no replica answered (default 0.5 s doubling to 30 s, jittered). */
  backoff?: BackoffOptions;
  /** How often to poll GET /pools when event streams are cut (default 5 s). */
  pollIntervalMs?: number;
  /** While polling, how often to try the event stream again (default 60 s). */
  sseRetryIntervalMs?: number;
  /** Until the stream's headers, and for each GET /pools (default 5 s). */
  requestTimeoutMs?: number;
  /** A stream whose first event does not come in this time counts as cut (default 10 s). */
  firstEventTimeoutMs?: number;
  /** A stream silent this long (the server comments at least every 15 s) is dead (default 45 s). */
  idleTimeoutMs?: number;
  /** Random source in [0, 1) (injectable for tests). */
  random?: () => number;
}

export type WatchTransport = 'sse' | 'polling' | 'disconnected';

export interface WatchStatus {
  /** The replica followed now (or tried last). */
  server: string;
  transport: WatchTransport;
  /**
   * True when the last list came with `complete: true` and the watch is still connected. While false,
   * known pools are kept though a replica may not list them (the caller merge rule).
   */
  complete: boolean;
  /** The revision of the last event or list applied. */
  revision: string | undefined;
  /**
   * Each region's status from the last list applied (a `resync` or a polled GET /pools), with regions
   * configured on the service (docs/contract.md §7); undefined without them.
   */
  regions: RegionStatus[] | undefined;
  /**
   * Why the last try failed, while no replica serves the watch (undefined once one does): the replica,
   * the reason, and the reply's status or the TLS problem a flag fixes (src/client/next-step.ts).
   */
  failure: ReplicaFailure | undefined;
}

/** A live view of the listed pools. */
export interface PoolWatch {
  /** Every known pool by key (`cluster_id/namespace/name`). */
  readonly pools: ReadonlyMap<PoolKey, ListedPool>;
  readonly status: WatchStatus;
  /** Resolves once the first list has been applied (or the watch was closed before). */
  readonly ready: Promise<void>;
  /** One pool by key or id. */
  get(id: PoolKey | PoolId): ListedPool | undefined;
  /** The known pools serving `model`, ordered by key. */
  byModel(model: string): ListedPool[];
  /** Called for each pool added, updated or removed. Returns the unsubscribe function. */
  onChange(listener: (change: PoolChange) => void): () => void;
  /** Called when the status changes (replica, transport, completeness). Returns the unsubscribe function. */
  onStatus(listener: (status: WatchStatus) => void): () => void;
  /** Stops following and closes connections; resolves when the loop has ended. */
  close(): Promise<void>;
}

/** A live view of the routers (docs/contract.md §10), followed exactly as the pools are. */
export interface RouterWatch {
  /** Every known router by id. */
  readonly routers: ReadonlyMap<string, ListedRouter>;
  readonly status: WatchStatus;
  readonly ready: Promise<void>;
  /** Called for each router added, updated or removed. Returns the unsubscribe function. */
  onChange(listener: (change: RouterChange) => void): () => void;
  onStatus(listener: (status: WatchStatus) => void): () => void;
  close(): Promise<void>;
}
