// startRelay(): a PoolRelay's heartbeat loop. Sends the registration with POST /pools at the interval the
// last reply named, stays on a replica while it answers, fails over to the next one at once on an error,
// a timeout or a 5xx, and backs off (jittered) only after every replica has failed in a row, with the
// wait kept short enough that the lease is renewed in time whenever any replica answers again. With
// fallback replicas (other regions, docs/contract.md §7) it heartbeats them only after every primary
// replica failed in a round, and goes back to the primaries as soon as one answers.
import { pino, type Logger } from 'pino';
import { heartbeatReplySchema, poolKey, type HeartbeatReply, type Registration, type RegistrationInput } from '../contract/index.js';
import { HttpTransport, TransportError, type HttpTransportOptions } from '../client/http-transport.js';
import { ReplicaRotation } from '../client/replica-rotation.js';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.js';
import { validateRegistration } from './registration.js';

/** The contract's defaults, used until the first reply names the real ones. */
const DEFAULT_INTERVAL_MS = 5000;
const DEFAULT_LEASE_MS = 15_000;

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
}

export type HeartbeatOutcome =
  | { ok: true; server: string; at: number; reply: HeartbeatReply }
  | { ok: false; server: string; at: number; status: number | undefined; reason: string };

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
  /** Stops heartbeating (the lease then lapses on its own) and closes connections. */
  stop(): Promise<void>;
}

/**
 * Starts heartbeating one pool's registration to a poolscope service.
 *
 * ```ts
 * const relay = startRelay({
 *   servers: ['http://poolscope-0:8080', 'http://poolscope-1:8080'],
 *   registration: { cluster_id: 'us-east-1', namespace: 'llm', name: 'llama-70b', model: 'meta-llama/Llama-3.1-70B-Instruct' },
 * });
 * process.once('SIGTERM', () => void relay.stop());
 * ```
 *
 * @throws RegistrationError when the registration breaks the contract (its `field` names the field).
 * @throws TypeError when `servers` is empty, when `servers` or `fallbackServers` holds something other than
 *   an http(s) URL, or when a replica is in both.
 */
export function startRelay(options: RelayOptions): Relay {
  return new HeartbeatLoop(options).start();
}

class HeartbeatLoop implements Relay {
  private current: Registration;
  private body: string;
  private readonly rotation: ReplicaRotation;
  /** The fallback replicas, when any were given. */
  private readonly fallback: ReplicaRotation | undefined;
  /** The last accepted heartbeat went to a fallback replica. */
  private onFallback = false;
  private readonly transport: HttpTransport;
  private readonly ownsTransport: boolean;
  private readonly logger: Logger;
  private readonly backoff: Backoff;
  private readonly random: () => number;
  private readonly stopping = new AbortController();
  /** Aborted to end the current wait early (a changed registration). */
  private nudge = new AbortController();
  private intervalMs = DEFAULT_INTERVAL_MS;
  private leaseMs = DEFAULT_LEASE_MS;
  private lastAcceptedAt: number | undefined;
  private failuresInRow = 0;
  private lapseReported = false;
  private loop: Promise<void> = Promise.resolve();
  private resolveRegistered!: (reply: HeartbeatReply) => void;
  readonly registered: Promise<HeartbeatReply>;

  constructor(private readonly options: RelayOptions) {
    this.current = validateRegistration(options.registration);
    this.body = JSON.stringify(this.current);
    this.rotation = new ReplicaRotation({ servers: options.servers, random: options.random });
    this.fallback = fallbackRotation(this.rotation.servers, options);
    this.ownsTransport = options.transport === undefined;
    this.transport = options.transport ?? new HttpTransport(options);
    this.logger = (options.logger ?? pino({ level: 'silent' })).child({ pool: poolKey(this.current) });
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff({ initialMs: 200, maxMs: 30_000, jitter: 0.5, random: this.random, ...options.backoff });
    this.registered = new Promise((resolve) => (this.resolveRegistered = resolve));
  }

  start(): this {
    const fallback = this.fallback === undefined ? {} : { fallback_servers: this.fallback.servers };
    this.logger.info({ servers: this.rotation.servers, ...fallback, first: this.rotation.current }, 'relay starting');
    this.loop = this.run().catch((error: unknown) => this.logger.error({ err: error }, 'relay stopped on an unexpected error'));
    return this;
  }

  get registration(): Registration {
    return this.current;
  }

  get status(): RelayStatus {
    return {
      server: this.onFallback && this.fallback !== undefined ? this.fallback.current : this.rotation.current,
      fallback: this.onFallback,
      heartbeatIntervalMs: this.intervalMs,
      leaseMs: this.leaseMs,
      lastAcceptedAt: this.lastAcceptedAt,
      failuresInRow: this.failuresInRow,
    };
  }

  update(registration: RegistrationInput): void {
    const next = validateRegistration(registration);
    if (poolKey(next) !== poolKey(this.current)) {
      throw new TypeError(`a relay keeps its pool: ${poolKey(this.current)}, not ${poolKey(next)}`);
    }
    this.current = next;
    this.body = JSON.stringify(next);
    this.nudge.abort();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    if (this.ownsTransport) this.transport.close();
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const round = await this.beatRound();
      if (this.stopping.signal.aborted) break;
      if (round.accepted !== undefined) {
        // Slightly early rather than late, and spread so a fleet of relays does not beat in step.
        const due = round.accepted + this.intervalMs * (0.9 + 0.1 * this.random());
        await this.wait(due - Date.now());
      } else {
        await this.wait(this.retryDelay(round.allRefused));
      }
    }
    this.logger.info('relay stopped');
  }

  /**
   * Tries each replica at most once, until one accepts: every primary replica, then every fallback one.
   * While on a fallback, one primary first (in turn), so the relay goes back as soon as one answers.
   */
  private async beatRound(): Promise<{ accepted: number | undefined; allRefused: boolean }> {
    let allRefused = true;
    const steps = this.roundSteps();
    for (const [stepIndex, step] of steps.entries()) {
      for (let tried = 0; tried < step.tries; tried++) {
        const server = step.rotation.current;
        const sentAt = Date.now();
        const outcome = await this.send(server, sentAt);
        if (this.stopping.signal.aborted) return { accepted: undefined, allRefused: false };
        this.options.onHeartbeat?.(outcome);
        if (outcome.ok) {
          this.accepted(outcome.reply, server, sentAt, step.rotation === this.fallback);
          return { accepted: sentAt, allRefused: false };
        }
        // A 4xx is this registration or token refused: retrying at the heartbeat pace will not fix it.
        const refused = outcome.status !== undefined && outcome.status >= 400 && outcome.status < 500 && outcome.status !== 429;
        allRefused &&= refused;
        step.rotation.failed();
        const next = tried + 1 < step.tries ? step.rotation.current : (steps[stepIndex + 1]?.rotation.current ?? this.rotation.current);
        const fields = { server, status: outcome.status, reason: outcome.reason, next };
        if (step.probe) {
          this.logger.debug(fields, 'primary replica still failing; staying on the fallback replicas');
          continue;
        }
        this.failuresInRow += 1;
        if (refused) this.logger.error(fields, 'heartbeat refused; trying the next replica');
        else this.logger.warn(fields, 'heartbeat failed; trying the next replica');
        this.reportLapse();
      }
    }
    return { accepted: undefined, allRefused };
  }

  /** The order of one round: which rotation, how many of its replicas, and whether it is a probe. */
  private roundSteps(): { rotation: ReplicaRotation; tries: number; probe: boolean }[] {
    const primaries = this.rotation.servers.length;
    if (this.fallback === undefined) return [{ rotation: this.rotation, tries: primaries, probe: false }];
    const fallbacks = { rotation: this.fallback, tries: this.fallback.servers.length, probe: false };
    if (!this.onFallback) return [{ rotation: this.rotation, tries: primaries, probe: false }, fallbacks];
    // The primaries not probed come last, so a round still tries every replica once before backing off.
    return [{ rotation: this.rotation, tries: 1, probe: true }, fallbacks, { rotation: this.rotation, tries: primaries - 1, probe: false }];
  }

  private async send(server: string, at: number): Promise<HeartbeatOutcome> {
    try {
      const reply = await this.transport.request(`${server}/pools`, {
        method: 'POST',
        json: this.body,
        timeoutMs: this.options.requestTimeoutMs ?? clamp(this.intervalMs / 2, 250, 5000),
        signal: this.stopping.signal,
      });
      if (reply.status !== 200) return { ok: false, server, at, status: reply.status, reason: describeRefusal(reply.status, reply.body) };
      const parsed = heartbeatReplySchema.safeParse(safeJson(reply.body));
      if (!parsed.success) return { ok: false, server, at, status: reply.status, reason: 'the reply breaks the contract' };
      return { ok: true, server, at, reply: parsed.data };
    } catch (error) {
      return { ok: false, server, at, status: undefined, reason: error instanceof TransportError ? error.reason : String(error) };
    }
  }

  private accepted(reply: HeartbeatReply, server: string, sentAt: number, onFallback: boolean): void {
    const first = this.lastAcceptedAt === undefined;
    if (!first && reply.heartbeat_interval_ms !== this.intervalMs) {
      this.logger.info({ from_ms: this.intervalMs, to_ms: reply.heartbeat_interval_ms, server }, 'heartbeat interval changed');
    }
    if (onFallback && !this.onFallback) {
      this.logger.warn(
        { server, primaries: this.rotation.servers, failures: this.failuresInRow },
        'every primary replica failed; heartbeating a fallback replica (another region)',
      );
    } else if (!onFallback && this.onFallback) {
      this.logger.info({ server, fallback: this.fallback?.current }, 'a primary replica answered; heartbeating it again instead of the fallback');
    } else if (this.failuresInRow > 0) {
      this.logger.info({ server, failures: this.failuresInRow }, 'heartbeat accepted again');
    }
    this.onFallback = onFallback;
    this.intervalMs = reply.heartbeat_interval_ms;
    this.leaseMs = reply.lease_ms;
    this.lastAcceptedAt = sentAt;
    this.failuresInRow = 0;
    this.lapseReported = false;
    (onFallback ? this.fallback! : this.rotation).succeeded();
    this.backoff.reset();
    if (first) {
      this.logger.info({ server, lease_ms: reply.lease_ms, heartbeat_interval_ms: reply.heartbeat_interval_ms }, 'registered');
      this.resolveRegistered(reply);
    } else {
      this.logger.debug({ server }, 'heartbeat accepted');
    }
  }

  /**
   * The wait after a round in which no replica accepted: the backoff, but while the lease still runs at
   * most a third of what is left of it (so two more rounds fit), and never longer than the interval.
   * When every replica refused (4xx), the full backoff: nothing will be accepted sooner.
   */
  private retryDelay(allRefused: boolean): number {
    const backoff = this.backoff.next();
    if (allRefused) return backoff;
    let cap = this.intervalMs;
    if (this.lastAcceptedAt !== undefined) {
      const leaseLeft = this.lastAcceptedAt + this.leaseMs - Date.now();
      if (leaseLeft > 0) cap = Math.min(cap, Math.max(50, leaseLeft / 3));
    }
    return Math.min(backoff, cap * (0.75 + 0.25 * this.random()));
  }

  private reportLapse(): void {
    if (this.lapseReported || this.lastAcceptedAt === undefined) return;
    if (Date.now() < this.lastAcceptedAt + this.leaseMs) return;
    this.lapseReported = true;
    this.logger.error(
      { lease_ms: this.leaseMs, last_accepted: new Date(this.lastAcceptedAt).toISOString() },
      'no replica accepted a heartbeat for a whole lease: the pool has lapsed',
    );
  }

  /** Waits `ms`, or less when stopped or nudged by update(). */
  private async wait(ms: number): Promise<void> {
    // A nudge that came while sending means: send again at once.
    if (!this.nudge.signal.aborted && ms > 0) await sleep(ms, AbortSignal.any([this.stopping.signal, this.nudge.signal]));
    if (this.nudge.signal.aborted) this.nudge = new AbortController();
  }
}

/** The fallback replicas' rotation, or undefined without any. @throws TypeError for a bad URL or one also primary */
function fallbackRotation(primaries: readonly string[], options: RelayOptions): ReplicaRotation | undefined {
  if (options.fallbackServers === undefined || options.fallbackServers.length === 0) return undefined;
  const rotation = new ReplicaRotation({ servers: options.fallbackServers, random: options.random });
  const both = rotation.servers.find((server) => primaries.includes(server));
  if (both !== undefined) throw new TypeError(`${JSON.stringify(both)} is both a server and a fallback server`);
  return rotation;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `503 store_unavailable: ...` from the contract's error body, or the bare status. */
function describeRefusal(status: number, body: string): string {
  const error = (safeJson(body) as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (error && typeof error.code === 'string') return `${status} ${error.code}: ${String(error.message ?? '')}`.trim();
  return `answered ${status}`;
}
