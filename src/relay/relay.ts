// startRelay(): a PoolRelay's heartbeat loop. Sends the registration with POST /pools at the interval the
// last reply named, stays on a replica while it answers, fails over to the next one at once on an error,
// a timeout or a 5xx, and backs off (jittered) only after every replica has failed in a row, with the
// wait kept short enough that the lease is renewed in time whenever any replica answers again. With
// fallback replicas (other regions, docs/contract.md §7) it heartbeats them only after every primary
// replica failed in a round, and goes back to the primaries as soon as one answers. A refusal (a 4xx: a
// token or a registration refused) is logged once per change of what is refused, with what to do about it,
// and retried on the growing backoff alone (to 30 s): retrying sooner would not change the answer.
import { pino, type Logger } from 'pino';
import { heartbeatReplySchema, poolKey, type HeartbeatReply, type ListedRouter, type Registration, type RegistrationInput } from '../contract/index.js';
import type { RouterChange } from '../client/router-map.js';
import { watchRouters, type RouterWatch } from '../client/watch-pools.js';
import { describeErrorReply, safeJson } from '../client/error-reply.js';
import { HttpTransport, TransportError, type HttpTransportOptions, type TlsProblem } from '../client/http-transport.js';
import { nextStep } from '../client/next-step.js';
import { ReplicaRotation } from '../client/replica-rotation.js';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.js';
import { validateRegistration } from './registration.js';
import type { HeartbeatOutcome, Relay, RelayOptions, RelayStatus } from './relay-types.js';

export type { HeartbeatOutcome, Relay, RelayOptions, RelayStatus } from './relay-types.js';

/** The contract's defaults, used until the first reply names the real ones. */
const DEFAULT_INTERVAL_MS = 5000;
const DEFAULT_LEASE_MS = 15_000;

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
  // Stryker disable next-line BooleanLiteral: equivalent, read only once a heartbeat was accepted, and accepting sets it false
  private lapseReported = false;
  /** The refusal last logged (status and reason), so a refusal is logged once per change. */
  private refusalLogged: string | undefined;
  private loop: Promise<void> = Promise.resolve();
  /** The routers followed (undefined with followRouters: false). */
  private routerWatch: RouterWatch | undefined;
  private resolveRegistered!: (reply: HeartbeatReply) => void;
  readonly registered: Promise<HeartbeatReply>;

  constructor(private readonly options: RelayOptions) {
    this.current = validateRegistration(options.registration);
    this.body = JSON.stringify(this.current);
    this.rotation = new ReplicaRotation({ servers: options.servers, random: options.random });
    this.fallback = fallbackRotation(this.rotation.servers, options);
    this.ownsTransport = options.transport === undefined;
    this.transport = options.transport ?? new HttpTransport(options);
    // The default logger's level only decides what reaches fd 1 (through sonic-boom), which no test in process reads.
    // Stryker disable next-line ObjectLiteral: equivalent in process
    const silent = { level: 'silent' };
    this.logger = (options.logger ?? pino(silent)).child({ pool: poolKey(this.current) });
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff({ initialMs: 200, maxMs: 30_000, jitter: 0.5, random: this.random, ...options.backoff });
    this.registered = new Promise((resolve) => (this.resolveRegistered = resolve));
  }

  start(): this {
    const fallback = this.fallback === undefined ? {} : { fallback_servers: this.fallback.servers };
    this.logger.info({ servers: this.rotation.servers, ...fallback, first: this.rotation.current }, 'relay starting');
    this.loop = this.run().catch((error: unknown) => this.logger.error({ err: error }, 'relay stopped on an unexpected error'));
    if (this.options.followRouters !== false) {
      const { servers, fallbackServers, backoff: _backoff, onHeartbeat: _onHeartbeat, transport: _transport, registration: _registration, ...rest } = this.options;
      this.routerWatch = watchRouters({ ...rest, servers: [...servers, ...(fallbackServers ?? [])], logger: this.logger.child({ watch: 'routers' }) });
    }
    return this;
  }

  routers(): ListedRouter[] {
    // The ids are the watch's map keys, so no two are equal.
    // Stryker disable next-line EqualityOperator: equivalent, `<=` differs from `<` only on equal ids
    return [...(this.routerWatch?.routers.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  onRoutersChange(listener: (change: RouterChange) => void): () => void {
    return this.routerWatch?.onChange(listener) ?? (() => {});
  }

  get registration(): Registration {
    return this.current;
  }

  get status(): RelayStatus {
    return {
      // Only ever on a fallback with fallback replicas.
      server: this.onFallback ? this.fallback!.current : this.rotation.current,
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
    await Promise.all([this.loop, this.routerWatch?.close()]);
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
        const delay = this.retryDelay(round.allRefused);
        if (round.refusal !== undefined) this.reportRefusal(round.refusal, delay, round.allRefused);
        await this.wait(delay);
      }
    }
    this.logger.info('relay stopped');
  }

  /**
   * Tries each replica at most once, until one accepts: every primary replica, then every fallback one.
   * While on a fallback, one primary first (in turn), so the relay goes back as soon as one answers.
   */
  private async beatRound(): Promise<{ accepted: number | undefined; allRefused: boolean; refusal?: HeartbeatOutcome & { ok: false } }> {
    let allRefused = true;
    let refusal: (HeartbeatOutcome & { ok: false }) | undefined;
    const steps = this.roundSteps();
    for (const [stepIndex, step] of steps.entries()) {
      for (let tried = 0; tried < step.tries; tried++) {
        const server = step.rotation.current;
        const sentAt = Date.now();
        const outcome = await this.send(server, sentAt);
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, run() ends on the stop before it reads the round (the condition is pinned: no outcome after a stop)
        if (this.stopping.signal.aborted) return { accepted: undefined, allRefused: false };
        this.options.onHeartbeat?.(outcome);
        if (outcome.ok) {
          this.accepted(outcome.reply, server, sentAt, step.rotation === this.fallback);
          // Stryker disable next-line BooleanLiteral: equivalent, run() reads allRefused only of a round nobody accepted
          return { accepted: sentAt, allRefused: false };
        }
        // A 4xx is this registration or token refused: retrying at the heartbeat pace will not fix it.
        const status = outcome.status ?? 0;
        const refused = status >= 400 && status < 500 && status !== 429;
        allRefused &&= refused;
        if (refused) refusal = outcome;
        step.rotation.failed();
        const next = tried + 1 < step.tries ? step.rotation.current : (steps[stepIndex + 1]?.rotation.current ?? this.rotation.current);
        const fields = { server, status: outcome.status, reason: outcome.reason, next };
        if (step.probe) {
          this.logger.debug(fields, 'primary replica still failing; staying on the fallback replicas');
          continue;
        }
        this.failuresInRow += 1;
        // A refusal is said once per change, after the round (reportRefusal).
        if (refused) this.logger.debug(fields, 'heartbeat refused; trying the next replica');
        else this.logger.warn({ ...fields, ...this.nextStepOf(outcome) }, 'heartbeat failed; trying the next replica');
        this.reportLapse();
      }
    }
    return { accepted: undefined, allRefused, ...(refusal === undefined ? {} : { refusal }) };
  }

  /** `{ next_step }` when a flag fixes the failure (a token, a CA, a client certificate). */
  private nextStepOf(outcome: HeartbeatOutcome & { ok: false }): { next_step: string | undefined } {
    const { token, ca, cert } = this.options;
    const setup = {
      token: token !== undefined,
      ca: ca !== undefined,
      // Stryker disable next-line ConditionalExpression,EqualityOperator: no step of a write depends on the client certificate yet
      cert: cert !== undefined,
      access: 'write',
    } as const;
    // (pino leaves out a field that is undefined.)
    return { next_step: nextStep({ status: outcome.status, tls: outcome.tls }, setup) };
  }

  /** A refusal (a 4xx), logged when it differs from the last one logged: its reason, what to do, the wait. */
  private reportRefusal(refusal: HeartbeatOutcome & { ok: false }, retryInMs: number, allRefused: boolean): void {
    const key = `${refusal.status} ${refusal.reason}`;
    if (key === this.refusalLogged) return;
    this.refusalLogged = key;
    this.logger.error(
      {
        server: refusal.server,
        status: refusal.status,
        reason: refusal.reason,
        ...this.nextStepOf(refusal),
        retry_in_ms: retryInMs,
        ...(allRefused ? { backoff_max_ms: this.backoff.maxDelayMs } : {}),
      },
      allRefused ? 'heartbeat refused by every replica; retrying with a growing backoff' : 'heartbeat refused; trying the other replicas',
    );
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
      if (reply.status !== 200) return { ok: false, server, at, status: reply.status, reason: describeErrorReply(reply.status, reply.body) };
      const parsed = heartbeatReplySchema.safeParse(safeJson(reply.body));
      if (!parsed.success) return { ok: false, server, at, status: reply.status, reason: 'the reply breaks the contract' };
      return { ok: true, server, at, reply: parsed.data };
    } catch (error) {
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: defensive, HttpTransport.request rejects only with a TransportError
      if (!(error instanceof TransportError)) return { ok: false, server, at, status: undefined, reason: String(error) };
      return { ok: false, server, at, status: undefined, reason: error.reason, ...(error.tls === undefined ? {} : { tls: error.tls }) };
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
      this.logger.info({ server, fallback: this.fallback!.current }, 'a primary replica answered; heartbeating it again instead of the fallback');
    } else if (this.failuresInRow > 0) {
      this.logger.info({ server, failures: this.failuresInRow }, 'heartbeat accepted again');
    }
    this.onFallback = onFallback;
    this.intervalMs = reply.heartbeat_interval_ms;
    this.leaseMs = reply.lease_ms;
    this.lastAcceptedAt = sentAt;
    this.failuresInRow = 0;
    this.lapseReported = false;
    this.refusalLogged = undefined;
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
   * Once the lease has run out, at most half the interval: if the store was out, the lease is held only
   * for one renewal window after the outage (the interval plus the replica's command timeout, docs/contract.md
   * §9), and a relay retrying at the full interval after a failed attempt would reach it just as it ends.
   * When every replica refused (4xx), the full backoff: nothing will be accepted sooner.
   */
  private retryDelay(allRefused: boolean): number {
    const backoff = this.backoff.next();
    if (allRefused) return backoff;
    let cap = this.intervalMs;
    if (this.lastAcceptedAt !== undefined) {
      const leaseLeft = this.lastAcceptedAt + this.leaseMs - Date.now();
      cap = leaseLeft > 0 ? Math.min(cap, Math.max(50, leaseLeft / 3)) : cap / 2;
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
    // A nudge that came while sending means: send again at once (sleep() returns at once on an aborted signal).
    await sleep(ms, AbortSignal.any([this.stopping.signal, this.nudge.signal]));
    // A fresh nudge for the next wait: update() aborts whichever is current.
    this.nudge = new AbortController();
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
