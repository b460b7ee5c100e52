// A Server-Sent Events reader that stamps each event with the moment its bytes arrived
// (performance.now(), before any parsing), for latency measurements on GET /pools/watch. Plain
// node:http, so the reader adds as little of its own delay as possible. It also counts the bytes the
// stream carried up to each event (a resumed stream is judged by what it costs against a full resync).
import http from 'node:http';
import { StringDecoder } from 'node:string_decoder';

export interface TimedEvent {
  event: string;
  data: unknown;
  /** The event's `id:` field, when it had one. */
  id?: string;
  /** performance.now() when the chunk holding the event's end arrived. */
  at: number;
  /** Bytes of the response body received up to the end of that chunk. */
  bytes: number;
}

export type TimedEventListener = (event: TimedEvent) => void;

export class TimedSse {
  private readonly listeners = new Set<TimedEventListener>();
  private readonly decoder = new StringDecoder('utf8');
  /** What arrived since the last event's end, in pieces: joined only once an event's end is in them. */
  private pending: string[] = [];
  /** The last character of what is pending (a blank line may straddle two chunks). */
  private lastChar = '';
  /** Bytes of the response body received so far. */
  bytes = 0;

  private reading = false;

  private constructor(
    private readonly request: http.ClientRequest,
    private readonly response: http.IncomingMessage,
  ) {}

  /** Opens the stream (with extra request headers, e.g. Last-Event-ID); resolves once the response headers arrived. */
  static open(url: string, headers: Record<string, string> = {}): Promise<TimedSse> {
    return new Promise((resolve, reject) => {
      const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } });
      request.once('error', reject);
      request.once('response', (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`GET ${url}: ${response.statusCode}`));
          response.resume();
          return;
        }
        // A closed stream after close() is expected; one before it fails the waits that depend on it.
        response.on('error', () => {});
        resolve(new TimedSse(request, response));
      });
    });
  }

  /**
   * Listens from now on. The stream is read only from the first subscription: what arrived before it (a
   * resumed stream's first frames come with its headers) waits unread for it, instead of being parsed
   * while nobody listens.
   */
  subscribe(listener: TimedEventListener): () => void {
    this.listeners.add(listener);
    if (!this.reading) {
      this.reading = true;
      this.response.on('data', (chunk: Buffer) => this.receive(chunk, performance.now()));
    }
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

  private receive(chunk: Buffer, at: number): void {
    this.bytes += chunk.length;
    const text = this.decoder.write(chunk);
    if (text === '') return;
    this.pending.push(text);
    // A multi-MiB resync arrives in many chunks: each is searched once, and the pieces are joined once.
    const ends = (this.lastChar + text).includes('\n\n');
    this.lastChar = text[text.length - 1]!;
    if (!ends) return;
    let buffer = this.pending.join('');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const parsed = parseBlock(block);
      if (parsed) for (const listener of [...this.listeners]) listener({ ...parsed, at, bytes: this.bytes });
    }
    this.pending = buffer === '' ? [] : [buffer];
    this.lastChar = buffer === '' ? '' : buffer[buffer.length - 1]!;
  }
}

function parseBlock(block: string): { event: string; data: unknown; id?: string } | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (data.length === 0) return undefined;
  return id === undefined ? { event, data: JSON.parse(data.join('\n')) } : { event, data: JSON.parse(data.join('\n')), id };
}
