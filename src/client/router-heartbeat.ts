// startRouterHeartbeat(): a Global Router replica registers itself (docs/contract.md §10). Sends the
// router's registration with POST /routers at the interval the last reply named, stays on a replica while
// it answers, moves to the next at once on an error, a timeout or a 5xx, and backs off (jittered) only
// after every replica failed in a row. A refusal (4xx) is logged once per change of what is refused and
// retried on the backoff alone.
import { pino, type Logger } from 'pino';
import { describeIssue, routerHeartbeatReplySchema, routerRegistrationSchema, type RouterHeartbeatReply, type RouterRegistration } from '../contract/index.js';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.js';
import { describeErrorReply, safeJson } from './error-reply.js';
import { HttpTransport, TransportError, type HttpTransportOptions } from './http-transport.js';
import { ReplicaRotation } from './replica-rotation.js';

/** The contract's default interval, used until the first reply names the real one. */
const DEFAULT_INTERVAL_MS = 5000;

export interface RouterHeartbeatOptions extends HttpTransportOptions {
  /** Base URLs of poolscope replicas; the heartbeat starts at a random one. */
  servers: readonly string[];
  /** `{id, url, region?, zone?}`: checked at start by the rules of POST /routers. */
  router: RouterRegistration;
  logger?: Logger;
  /** Per heartbeat (default 2 s). */
  requestTimeoutMs?: number;
  /** Backoff after a round in which no replica answered (default 0.2 s doubling to 30 s, jittered). */
  backoff?: BackoffOptions;
  random?: () => number;
}

export interface RouterHeartbeat {
  readonly router: RouterRegistration;
  /** Resolves on the first accepted heartbeat (pending while no replica accepts). */
  readonly registered: Promise<RouterHeartbeatReply>;
  /** Epoch ms of the last accepted heartbeat. */
  readonly lastAcceptedAt: number | undefined;
  /** Stops heartbeating (the lease then lapses on its own) and closes connections. */
  stop(): Promise<void>;
}

/**
 * Registers a router with a poolscope service and keeps its lease.
 *
 * ```ts
 * const heartbeat = startRouterHeartbeat({
 *   servers: ['http://poolscope-0:8080', 'http://poolscope-1:8080'],
 *   router: { id: 'gr-7f9c', url: 'http://10.0.1.5:9100', region: 'us-east-1' },
 * });
 * ```
 *
 * @throws TypeError when the router breaks a rule of POST /routers (naming the field), or `servers` is empty.
 */
export function startRouterHeartbeat(options: RouterHeartbeatOptions): RouterHeartbeat {
  const parsed = routerRegistrationSchema.safeParse(options.router);
  if (!parsed.success) throw new TypeError(`router: ${describeIssue(parsed.error.issues).message}`);
  return new RouterHeartbeatLoop(options, parsed.data).start();
}

class RouterHeartbeatLoop implements RouterHeartbeat {
  private readonly rotation: ReplicaRotation;
  private readonly transport: HttpTransport;
  private readonly logger: Logger;
  private readonly backoff: Backoff;
  private readonly random: () => number;
  private readonly stopping = new AbortController();
  private readonly body: string;
  private intervalMs = DEFAULT_INTERVAL_MS;
  private refusalLogged: string | undefined;
  private loop: Promise<void> = Promise.resolve();
  private resolveRegistered!: (reply: RouterHeartbeatReply) => void;
  readonly registered: Promise<RouterHeartbeatReply>;
  lastAcceptedAt: number | undefined;

  constructor(
    private readonly options: RouterHeartbeatOptions,
    readonly router: RouterRegistration,
  ) {
    this.rotation = new ReplicaRotation({ servers: options.servers, random: options.random });
    this.transport = new HttpTransport(options);
    this.logger = (options.logger ?? pino({ level: 'silent' })).child({ router: router.id });
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff({ initialMs: 200, maxMs: 30_000, jitter: 0.5, random: this.random, ...options.backoff });
    this.body = JSON.stringify(router);
    this.registered = new Promise((resolve) => (this.resolveRegistered = resolve));
  }

  start(): this {
    this.logger.info({ servers: this.rotation.servers, url: this.router.url }, 'router heartbeat starting');
    this.loop = this.run().catch((error: unknown) => this.logger.error({ err: error }, 'router heartbeat stopped on an unexpected error'));
    return this;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    this.transport.close();
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      let accepted = false;
      // One round: replica after replica until one accepts, all have failed in a row (the rotation counts
      // them), or the heartbeat is stopped.
      for (;;) {
        const server = this.rotation.current;
        const failure = await this.send(server);
        // Stopped mid-request: the abort is ours, not the replica failing (no warning, no rotation).
        if (signal.aborted) break;
        if (failure === undefined) {
          accepted = true;
          break;
        }
        const roundFailed = this.rotation.failed();
        this.logger.warn({ server, reason: failure, next: this.rotation.current }, 'router heartbeat failed; trying the next replica');
        if (roundFailed) break;
      }
      // Stopped: the sleep returns at once, and the loop ends.
      if (accepted) {
        this.backoff.reset();
        await sleep(this.intervalMs * (0.9 + 0.1 * this.random()), signal);
      } else {
        await sleep(this.backoff.next(), signal);
      }
    }
    this.logger.info('router heartbeat stopped');
  }

  /** One POST /routers; undefined when accepted, else why not. */
  private async send(server: string): Promise<string | undefined> {
    try {
      const reply = await this.transport.request(`${server}/routers`, {
        method: 'POST',
        json: this.body,
        timeoutMs: this.options.requestTimeoutMs ?? 2000,
        signal: this.stopping.signal,
      });
      if (reply.status !== 200) {
        const reason = `POST /routers: ${describeErrorReply(reply.status, reply.body)}`;
        if (reply.status >= 400 && reply.status < 500 && this.refusalLogged !== reason) {
          this.refusalLogged = reason;
          this.logger.error({ server, status: reply.status, reason }, 'router registration refused');
        }
        return reason;
      }
      const parsed = routerHeartbeatReplySchema.safeParse(safeJson(reply.body));
      if (!parsed.success) return 'POST /routers answered a body that breaks the contract';
      this.rotation.succeeded();
      this.refusalLogged = undefined;
      this.intervalMs = parsed.data.heartbeat_interval_ms;
      if (this.lastAcceptedAt === undefined) this.logger.info({ server, lease_ms: parsed.data.lease_ms }, 'router registered');
      this.lastAcceptedAt = Date.now();
      this.resolveRegistered(parsed.data);
      return undefined;
    } catch (error) {
      return error instanceof TransportError ? error.reason : String(error);
    }
  }
}
