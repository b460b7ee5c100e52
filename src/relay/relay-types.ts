// The public types of a relay (startRelay in relay.ts): its options, each heartbeat's outcome, its status
// and the handle it returns, apart from the heartbeat loop itself.
import type { Logger } from 'pino';
import type { HeartbeatReply, ListedRouter, Registration, RegistrationInput } from '../contract/index.js';
import type { RouterChange } from '../client/router-map.js';
import type { HttpTransport, HttpTransportOptions, TlsProblem } from '../client/http-transport.js';
import type { BackoffOptions } from '../util/backoff.js';

export interface RelayOptions extends HttpTransportOptions {
  /** Base URLs of poolscope replicas, e.g. `http://poolscope:8080`; the relay starts at a random one. */
  servers: readonly string[];
  /**
   * Replicas of other regions (docs/contract.md §7), heartbeated only after every one of `servers` failed
   * in a round. While on them, each round first tries one of `servers` (in turn), and the relay goes back
   * as soon as one accepts. Default: none.
   */
  fallbackServers?: readonly string[];
  /** The pool's registration (docs/contract.md §5); checked at start. */
  registration: RegistrationInput;
  /** pino logger (default: silent). */
  logger?: Logger;
  /** Per heartbeat; default half the heartbeat interval, between 250 ms and 5 s. */
  requestTimeoutMs?: number;
  /** Backoff after a round in which no replica answered (default 0.2 s doubling, jittered). */
  backoff?: BackoffOptions;
  /** Random source in [0, 1) (injectable for tests). */
  random?: () => number;
  /** Called after each heartbeat attempt. */
  onHeartbeat?: (outcome: HeartbeatOutcome) => void;
  /** Share one connection pool among many relays (`poolscope simulate`); closed by its owner, not here. */
  transport?: HttpTransport;
  /**
   * Follow the routers (docs/contract.md §10: GET /routers/watch on the same replicas, with the resume and
   * merge rule of a pool watch), for `routers()` and `onRoutersChange` (default true).
   */
  followRouters?: boolean;
}

export type HeartbeatOutcome =
  | { ok: true; server: string; at: number; reply: HeartbeatReply }
  | { ok: false; server: string; at: number; status: number | undefined; reason: string; tls?: TlsProblem };

export interface RelayStatus {
  /** The replica the relay sends to now. */
  server: string;
  /** True while heartbeats go to a fallback replica (every primary one failed). */
  fallback: boolean;
  /** From the last reply (the contract's default until then). */
  heartbeatIntervalMs: number;
  leaseMs: number;
  /** Epoch ms of the last accepted heartbeat. */
  lastAcceptedAt: number | undefined;
  /** Failed heartbeats since the last accepted one; a failed try of a primary while on a fallback is not counted. */
  failuresInRow: number;
}

export interface Relay {
  /** The registration being sent, defaults filled in. */
  readonly registration: Registration;
  readonly status: RelayStatus;
  /** Resolves on the first accepted heartbeat (never rejects; pending while no replica accepts). */
  readonly registered: Promise<HeartbeatReply>;
  /** Sends a changed registration at once and from then on. @throws RegistrationError */
  update(registration: RegistrationInput): void;
  /**
   * The routers this relay should keep a connection to, sorted by id, under the caller merge rule (empty
   * with `followRouters: false`, or before the first list).
   */
  routers(): ListedRouter[];
  /** Called for each router added, updated or removed. Returns the unsubscribe function. */
  onRoutersChange(listener: (change: RouterChange) => void): () => void;
  /** Stops heartbeating (the lease then lapses on its own) and closes connections. */
  stop(): Promise<void>;
}
