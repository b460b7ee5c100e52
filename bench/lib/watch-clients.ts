// Many GET /pools/watch streams from one process, as plain sockets (an SSE client per stream would cost
// the load generator more than the replica): each stream only looks for the marker of the round under
// way in what it receives, and the round ends when the last stream has seen it.
import { connect, type Socket } from 'node:net';

const request = (lastEventId: string | undefined) =>
  `GET /pools/watch HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n${lastEventId ? `Last-Event-ID: ${lastEventId}\r\n` : ''}\r\n`;

interface Stream {
  socket: Socket;
  /** The end of what it received last, so a marker split across two reads is still found. */
  tail: string;
  resynced: boolean;
  /** The last round whose marker it saw. */
  round: number;
}

export class WatchClients {
  private readonly streams: Stream[] = [];
  private marker = '';
  private round = 0;
  private seen = 0;
  private onLast: ((at: number) => void) | undefined;
  private resynced = 0;
  private target = 0;
  private onAllResynced: (() => void) | undefined;
  private lastEventId: string | undefined;
  closedEarly = 0;

  /**
   * Open `count` streams to 127.0.0.1:`port`, `batch` at a time, and wait for every first resync (with
   * `lastEventId`, a revision in the replica's replay window: every `: resumed`, no resync sent).
   */
  static async open(port: number, count: number, batch = 500, lastEventId?: string): Promise<WatchClients> {
    const clients = new WatchClients();
    clients.lastEventId = lastEventId;
    clients.target = count;
    const allResynced = new Promise<void>((resolve) => (clients.onAllResynced = resolve));
    for (let i = 0; i < count; i += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, count - i) }, () => clients.add(port)));
    }
    if (clients.resynced < count) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`only ${clients.resynced} of ${count} watch streams got their resync within 120 s`)), 120_000);
      });
      try {
        await Promise.race([allResynced, timeout]);
      } finally {
        clearTimeout(timer);
        if (clients.resynced < count) clients.close();
      }
    }
    return clients;
  }

  get size(): number {
    return this.streams.length;
  }

  /** Start a round: resolves with performance.now() when the last stream has received `marker`. */
  expect(marker: string): Promise<number> {
    this.marker = marker;
    this.round += 1;
    this.seen = 0;
    return new Promise((resolve) => (this.onLast = resolve));
  }

  close(): void {
    for (const stream of this.streams) stream.socket.destroy();
  }

  private add(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      const stream: Stream = { socket, tail: '', resynced: false, round: 0 };
      this.streams.push(stream);
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => this.receive(stream, chunk));
      socket.once('close', () => {
        if (stream.round < this.round || !stream.resynced) this.closedEarly += 1;
      });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.write(request(this.lastEventId));
        resolve();
      });
    });
  }

  private receive(stream: Stream, chunk: string): void {
    const text = stream.tail + chunk;
    stream.tail = text.slice(-128);
    if (!stream.resynced && (text.includes('event: resync') || text.includes(': resumed'))) {
      stream.resynced = true;
      this.resynced += 1;
      if (this.resynced === this.target) this.onAllResynced?.();
    }
    if (this.marker !== '' && stream.round < this.round && text.includes(this.marker)) {
      stream.round = this.round;
      this.seen += 1;
      if (this.seen === this.streams.length) this.onLast?.(performance.now());
    }
  }
}
