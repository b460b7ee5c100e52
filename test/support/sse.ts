// A minimal Server-Sent Events reader, for tests of GET /pools/watch and the /debug feed, over a socket or
// through `app.request()`: parses `event:`, `data:`, `id:` and comment lines exactly as they come.
import { request, type Target } from './http.js';

export interface SseMessage {
  event: string;
  data: unknown;
  id: string | undefined;
}

export class SseReader {
  readonly messages: SseMessage[] = [];
  comments = 0;
  private readonly abort = new AbortController();
  private body: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private done: Promise<void> = Promise.resolve();
  ended = false;

  /** Follow `path` on `target`: the URL of a socket (fetch), or the app itself (`app.request()`). */
  static async open(target: Target, path = '', lastEventId?: string): Promise<SseReader> {
    const reader = new SseReader();
    const headers: Record<string, string> = { accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) };
    const response = await request(target, path, { signal: reader.abort.signal, headers });
    if (!response.ok || !response.body) throw new Error(`GET ${path || String(target)}: ${response.status}`);
    reader.body = response.body.getReader();
    reader.done = reader.consume(reader.body);
    return reader;
  }

  of(event: string): SseMessage[] {
    return this.messages.filter((m) => m.event === event);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.body?.cancel().catch(() => {});
    await this.done.catch(() => {});
  }

  private async consume(body: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await body.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          this.parse(block);
        }
      }
    } catch {
      // aborted by close()
    } finally {
      this.ended = true;
    }
  }

  private parse(block: string): void {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments += 1;
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (data.length > 0) this.messages.push({ event, data: JSON.parse(data.join('\n')), id });
  }
}
