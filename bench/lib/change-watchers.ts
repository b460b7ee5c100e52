// Watch streams that time many changes at once: each change carries a number (a capacity entry
// `{"name":"change","value":N}`), every stream counts the numbers it receives, and change N is done when
// as many streams as are open received it: its time is when the last one did. Plain sockets, resumed
// with Last-Event-ID at a revision of the replica (no resync of the whole list per stream).
import { connect, type Socket } from 'node:net';

const CHANGE = /"name":"change","value":(\d+)\}/g;

export class ChangeWatchers {
  private readonly sockets: Socket[] = [];
  private readonly arrivals = new Map<number, { count: number; lastAt: number }>();
  closedEarly = 0;
  private closing = false;

  get size(): number {
    return this.sockets.length;
  }

  /** Open `count` streams to 127.0.0.1:`port`, resumed after `lastEventId`; resolves once every one answered. */
  async open(port: number, count: number, lastEventId: string): Promise<void> {
    const request = `GET /pools/watch HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\nLast-Event-ID: ${lastEventId}\r\n\r\n`;
    await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<void>((resolve, reject) => {
            const socket = connect({ host: '127.0.0.1', port });
            this.sockets.push(socket);
            let tail = '';
            let answered = false;
            socket.setEncoding('latin1');
            socket.on('data', (chunk: string) => {
              if (!answered) {
                answered = true;
                resolve();
              }
              const text = tail + chunk;
              // Keep the end of this read: a change split across two reads is found in the next.
              const cut = text.lastIndexOf('\n');
              tail = text.slice(cut + 1);
              this.receive(text.slice(0, cut + 1));
            });
            socket.once('close', () => {
              if (!this.closing) this.closedEarly += 1;
            });
            socket.once('error', reject);
            socket.once('connect', () => socket.write(request));
          }),
      ),
    );
  }

  private receive(text: string): void {
    const at = performance.now();
    for (const match of text.matchAll(CHANGE)) {
      const id = Number(match[1]);
      const arrival = this.arrivals.get(id);
      if (arrival) {
        arrival.count += 1;
        arrival.lastAt = at;
      } else this.arrivals.set(id, { count: 1, lastAt: at });
    }
  }

  /** When every open stream had received change `id` (performance.now()), or undefined. */
  doneAt(id: number): number | undefined {
    const arrival = this.arrivals.get(id);
    return arrival && arrival.count >= this.sockets.length ? arrival.lastAt : undefined;
  }

  close(): void {
    this.closing = true;
    for (const socket of this.sockets) socket.destroy();
  }
}
