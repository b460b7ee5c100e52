// A TCP proxy standing for a WAN path in tests (no `tc netem` here: docs/design.md "Scale and regions").
// It listens on 127.0.0.1 and a free port and forwards every connection to one target, with faults
// a test switches on and off: a delay on every chunk each way (order kept), a hold that forwards nothing
// while every socket stays open (a partition that looks half-open: no FIN, no RST, nothing), a blackhole
// of the connections of the moment (their bytes dropped, their sockets left open, as behind a dead NAT
// entry or a frozen peer) while new connections pass, and a reset that drops the connections of the
// moment while new ones still pass.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxyOptions {
  target: { host: string; port: number };
}

export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** Delay every chunk received from now on by `ms`, each way; order is kept. 0: none. */
  setDelay(ms: number): void;
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
  /** Stop listening and destroy every connection. */
  close(): Promise<void>;
}

export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const state: ProxyState = { delayMs: 0, held: false, links: new Set() };
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
}

/** A chunk on its way, and when it may be written. */
interface Pending {
  chunk: Buffer;
  dueAt: number;
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
    this.toTarget = new Direction(client, this.upstream, state);
    this.toClient = new Direction(this.upstream, client, state);
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

/** Bytes from one socket to the other: kept in order, each written once its delay passed and no hold is on. */
class Direction {
  private readonly queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  /** Bytes that arrive are dropped. */
  blackholed = false;

  constructor(
    from: Socket,
    private readonly to: Socket,
    private readonly state: ProxyState,
  ) {
    from.on('data', (chunk: Buffer) => {
      if (this.blackholed) return;
      this.queue.push({ chunk, dueAt: Date.now() + this.state.delayMs });
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
      const wait = next.dueAt - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, wait);
        return;
      }
      this.queue.shift();
      if (!this.to.destroyed) this.to.write(next.chunk);
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
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
