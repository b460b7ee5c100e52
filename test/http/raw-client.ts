// What the limit tests need below fetch: plain TCP connections that send exactly the bytes a test
// writes (a paused reader, a request that never finishes its headers, a body cut short, a malformed
// request line) and many cheap watch streams; and one metric sample read from GET /metrics.
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  socket: Socket;
  /** Every byte received so far, as latin1 text (enough to find status lines and SSE fields). */
  readonly received: string;
  readonly bytes: number;
  readonly closed: boolean;
  /** Resolves once the connection is closed (by either side). */
  readonly whenClosed: Promise<void>;
  /** The status of the response, once its status line arrived. */
  status(): number | undefined;
  count(text: string): number;
}

/** Open a connection to 127.0.0.1:`port` and write `text` (keep everything received unless `keep` is false). */
export function rawConnect(port: number, text: string, options: { keep?: boolean } = {}): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    let bytes = 0;
    let closed = false;
    const keep = options.keep ?? true;
    const whenClosed = new Promise<void>((done) =>
      socket.once('close', () => {
        closed = true;
        done();
      }),
    );
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (keep) received += chunk.toString('latin1');
      else if (received.length < 4096) received += chunk.toString('latin1').slice(0, 4096 - received.length);
    });
    socket.on('error', () => {});
    socket.once('connect', () => {
      if (text) socket.write(text);
      resolve({
        socket,
        get received() {
          return received;
        },
        get bytes() {
          return bytes;
        },
        get closed() {
          return closed;
        },
        whenClosed,
        status() {
          const match = /^HTTP\/1\.1 (\d{3})/.exec(received);
          return match ? Number(match[1]) : undefined;
        },
        count(needle: string) {
          let n = 0;
          for (let at = received.indexOf(needle); at >= 0; at = received.indexOf(needle, at + needle.length)) n += 1;
          return n;
        },
      });
    });
    socket.once('error', reject);
  });
}

/** A GET /pools/watch request as raw bytes. */
export const WATCH_REQUEST = 'GET /pools/watch HTTP/1.1\r\nHost: poolscope\r\nAccept: text/event-stream\r\n\r\n';

/** One sample of `name` (with exactly these labels, or none) from GET /metrics at `url`; undefined when absent. */
export async function metricSample(url: string, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if ((match[2] ?? '') === wanted) return Number(match[3]);
  }
  return undefined;
}
