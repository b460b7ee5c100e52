// A Server-Sent Events reader that stamps each event with the moment its bytes arrived
// (performance.now(), before any parsing), for latency measurements on GET /pools/watch. Plain
// node:http, so the reader adds as little of its own delay as possible.
import http from 'node:http';

export interface TimedEvent {
  event: string;
  data: unknown;
  /** performance.now() when the chunk holding the event's end arrived. */
  at: number;
}

export type TimedEventListener = (event: TimedEvent) => void;

export class TimedSse {
  private readonly listeners = new Set<TimedEventListener>();
  private buffer = '';

  private constructor(private readonly request: http.ClientRequest) {}

  /** Opens the stream; resolves once the response headers arrived. */
  static open(url: string): Promise<TimedSse> {
    return new Promise((resolve, reject) => {
      const request = http.get(url, { headers: { accept: 'text/event-stream' } });
      const reader = new TimedSse(request);
      request.once('error', reject);
      request.once('response', (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`GET ${url}: ${response.statusCode}`));
          response.resume();
          return;
        }
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => reader.receive(chunk, performance.now()));
        // A closed stream after close() is expected; one before it fails the waits that depend on it.
        response.on('error', () => {});
        resolve(reader);
      });
    });
  }

  subscribe(listener: TimedEventListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** The first event (from now on) that `match` accepts, or a rejection after `timeoutMs`. */
  next(match: (event: TimedEvent) => boolean, timeoutMs: number): Promise<TimedEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        unsubscribe();
        reject(new Error(`no matching SSE event within ${timeoutMs} ms`));
      }, timeoutMs);
      const unsubscribe = this.subscribe((event) => {
        if (!match(event)) return;
        clearTimeout(timer);
        unsubscribe();
        resolve(event);
      });
    });
  }

  close(): void {
    this.request.destroy();
  }

  private receive(chunk: string, at: number): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const parsed = parseBlock(block);
      if (parsed) for (const listener of [...this.listeners]) listener({ ...parsed, at });
    }
  }
}

function parseBlock(block: string): { event: string; data: unknown } | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length > 0 ? { event, data: JSON.parse(data.join('\n')) } : undefined;
}
