// A TCP proxy standing for a WAN path in tests (no `tc netem` here: docs/design.md "Scale and regions").
// It listens on 127.0.0.1 and a free port and forwards every connection to one target, with faults
// a test switches on and off: a delay on every chunk each way (order kept), a hold that forwards nothing
// while every socket stays open (a partition that looks half-open: no FIN, no RST, nothing), a blackhole
// of the connections of the moment (their bytes dropped, their sockets left open, as behind a dead NAT
// entry or a frozen peer) while new connections pass, a reset that drops the connections of the
// moment while new ones still pass, and a polite close of them (a FIN to the client, as a load balancer
// that ends long connections sends). A rate limit (bytes/s, each way, shared by every connection as
// one link's bandwidth is) paces what passes: a chunk is written once the link would have carried it.
// What waits to pass is bounded: a connection whose queue holds more than QUEUE_HIGH_BYTES stops being
// read until it drains (TCP's own backpressure, as a sender's window fills on a slow path), so a slow
// link holds bytes in the sender's buffers, not in this process.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxyOptions {
  target: { host: string; port: number };
}

export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** Delay every chunk received from now on by `ms`, each way; order is kept. 0: none. */
  setDelay(ms: number): void;
  /**
   * Carry at most `bytesPerSecond` each way from now on, shared by every connection (one link's
   * bandwidth); on top of the delay. 0: no limit.
   */
  setRate(bytesPerSecond: number): void;
  /** Forward nothing either way (bytes are kept, sockets stay open), on current and new connections. */
  hold(): void;
  /** Forward again, the bytes held first, in order. */
  release(): void;
  /**
   * Every current connection forwards nothing from now on, either way, for good: its bytes are dropped
   * and its sockets stay open (no FIN, no RST), as on a half-open path. New connections pass. Returns how
   * many connections it caught.
   */
  blackholeExisting(): number;
  /** Destroy every current connection (both sides, with RST); new connections still pass. */
  reset(): void;
  /**
   * Close every current connection politely: the client gets what was passed on so far, then a FIN (no
   * RST), wherever the reply it was reading stood; the target's side is dropped. New connections pass.
   */
  closeExisting(): void;
  /** Stop listening and destroy every connection. */
  close(): Promise<void>;
}

export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const state: ProxyState = { delayMs: 0, held: false, links: new Set(), rate: { toTarget: new Pacer(), toClient: new Pacer() } };
  const server = createServer({ allowHalfOpen: true }, (client) => state.links.add(new Link(client, options.target, state)));
  await listenOnLoopback(server);
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the proxy has no port');

  return {
    port: address.port,
    setDelay(ms) {
      if (!(ms >= 0)) throw new RangeError(`delay must be >= 0, got ${ms}`);
      state.delayMs = ms;
    },
    setRate(bytesPerSecond) {
      if (!(bytesPerSecond >= 0 && Number.isFinite(bytesPerSecond))) throw new RangeError(`rate must be a finite number >= 0, got ${bytesPerSecond}`);
      state.rate.toTarget.bytesPerSecond = bytesPerSecond;
      state.rate.toClient.bytesPerSecond = bytesPerSecond;
      for (const link of state.links) link.pump();
    },
    hold() {
      state.held = true;
    },
    release() {
      state.held = false;
      for (const link of state.links) link.pump();
    },
    blackholeExisting() {
      for (const link of state.links) link.blackhole();
      return state.links.size;
    },
    reset() {
      for (const link of [...state.links]) link.destroy();
    },
    closeExisting() {
      for (const link of [...state.links]) link.finish();
    },
    async close() {
      for (const link of [...state.links]) link.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface ProxyState {
  delayMs: number;
  held: boolean;
  links: Set<Link>;
  /** One link's bandwidth each way, shared by every connection. */
  rate: { toTarget: Pacer; toClient: Pacer };
}

/** A chunk on its way, when its delay has passed, and when the link has carried it (once it reached the link). */
interface Pending {
  chunk: Buffer;
  dueAt: number;
  carriedAt?: number;
}

/** A connection stops being read while this much waits in its queue, and is read again once it drained. */
const QUEUE_HIGH_BYTES = 1024 * 1024;

/**
 * The bandwidth of one direction of the link: a chunk is on the wire after the chunks before it (of any
 * connection) and takes its length / rate to cross. Times are Date.now() ms (fractions kept).
 */
class Pacer {
  bytesPerSecond = 0;
  private freeAt = 0;

  /**
   * When a chunk of `bytes` that was ready for the link at `readyAt` has crossed it. From when it was
   * ready, not from when a timer got round to it: a late timer (a loaded machine) must not cost the link
   * its capacity, as it would if each chunk's turn began only when this process looked.
   */
  carry(bytes: number, readyAt: number): number {
    if (this.bytesPerSecond === 0) return readyAt;
    const start = Math.max(readyAt, this.freeAt);
    this.freeAt = start + (bytes * 1000) / this.bytesPerSecond;
    return this.freeAt;
  }
}

/** One proxied connection: the client's socket, the target's, and a queue each way. */
class Link {
  private readonly upstream: Socket;
  private readonly toTarget: Direction;
  private readonly toClient: Direction;
  private destroyed = false;
  /** One side closed during a hold: the other learns of it only when the hold ends, as over a real path. */
  private closeHeld = false;
  /** Blackholed: nothing passes any more, nothing closes (until the proxy closes). */
  private dead = false;

  constructor(
    private readonly client: Socket,
    target: TcpProxyOptions['target'],
    private readonly state: ProxyState,
  ) {
    // Half-closes pass through as they come (a FIN is forwarded after the bytes before it).
    this.upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    this.toTarget = new Direction(client, this.upstream, state, state.rate.toTarget);
    this.toClient = new Direction(this.upstream, client, state, state.rate.toClient);
    for (const socket of [client, this.upstream]) {
      socket.setNoDelay(true);
      // Either side failing or closing ends the link, as it would end a real connection.
      socket.on('error', () => this.closed());
      socket.on('close', () => this.closed());
    }
  }

  /** Drop whatever is queued or comes later, both ways; keep both sockets open. */
  blackhole(): void {
    this.dead = true;
    this.toTarget.stop();
    this.toClient.stop();
    this.toTarget.blackholed = true;
    this.toClient.blackholed = true;
  }

  pump(): void {
    if (this.dead) return;
    if (this.closeHeld && !this.state.held) return this.destroy();
    this.toTarget.pump();
    this.toClient.pump();
  }

  private closed(): void {
    // Behind a blackhole the other side never hears of it (the proxy's close() still destroys both).
    if (this.dead) return;
    if (this.state.held) this.closeHeld = true;
    else this.destroy();
  }

  /** A FIN to the client after the bytes already written; the target's socket dropped. */
  finish(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.state.links.delete(this);
    this.toTarget.stop();
    this.toClient.stop();
    this.upstream.destroy();
    this.client.end();
    // The client closes its side in turn; a client that never does is let go after a while.
    this.client.once('end', () => this.client.destroy());
    setTimeout(() => this.client.destroy(), 5000).unref();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.state.links.delete(this);
    this.toTarget.stop();
    this.toClient.stop();
    for (const socket of [this.client, this.upstream]) {
      // RST where the socket is connected (a dropped path, not a polite close); plain destroy otherwise.
      if (!socket.destroyed && socket.readyState === 'open') socket.resetAndDestroy();
      else socket.destroy();
    }
  }
}

/**
 * Bytes from one socket to the other: kept in order, each written once its delay passed, the link carried
 * it (the rate) and no hold is on.
 */
class Direction {
  private readonly queue: Pending[] = [];
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  /** Bytes that arrive are dropped. */
  blackholed = false;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly state: ProxyState,
    private readonly pacer: Pacer,
  ) {
    from.on('data', (chunk: Buffer) => {
      if (this.blackholed) return;
      this.queue.push({ chunk, dueAt: Date.now() + this.state.delayMs });
      this.queuedBytes += chunk.length;
      if (this.queuedBytes > QUEUE_HIGH_BYTES) from.pause();
      this.pump();
    });
    from.on('end', () => {
      if (this.blackholed) return;
      this.ended = true;
      this.pump();
    });
  }

  pump(): void {
    if (this.timer) return;
    while (!this.state.held) {
      const next = this.queue[0];
      if (!next) {
        // The other side closed its half and everything it sent has been passed on.
        if (this.ended && !this.to.destroyed) this.to.end();
        return;
      }
      const now = Date.now();
      // Its delay first (the path's latency), then its turn on the link (the rate).
      if (next.dueAt <= now) next.carriedAt ??= this.pacer.carry(next.chunk.length, next.dueAt);
      const wait = (next.carriedAt ?? next.dueAt) - now;
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, Math.ceil(wait));
        return;
      }
      this.queue.shift();
      this.queuedBytes -= next.chunk.length;
      if (this.queuedBytes <= QUEUE_HIGH_BYTES && this.from.isPaused()) this.from.resume();
      if (!this.to.destroyed) this.to.write(next.chunk);
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
    this.queuedBytes = 0;
    // Read again, so a blackhole drops what comes rather than leave it in the sender's buffers.
    if (!this.from.destroyed && this.from.isPaused()) this.from.resume();
  }
}

/** Listen on a free port of 127.0.0.1; resolves once listening, rejects on a listen error. */
export function listenOnLoopback(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
