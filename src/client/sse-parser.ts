// A Server-Sent Events parser (the WHATWG "event stream interpretation"), fed text as it arrives: lines
// end in \n, \r\n or \r; `event`, `data`, `id` fields; lines starting with ':' are comments; a blank
// line dispatches the event. Pure, so the router client's tests can feed it any split of the bytes.

export interface SseMessage {
  /** `message` when the stream names no event. */
  event: string;
  /** The data lines joined with '\n'. */
  data: string;
  /** The last `id:` seen on the stream, if any. */
  id: string | undefined;
}

export class SseParser {
  /** `onComment`: the text of each comment line, after the ':' (the server's `: resumed`). */
  constructor(private readonly options: { onComment?(text: string): void } = {}) {}

  private buffer = '';
  private started = false;
  /** A '\r' ended the last chunk: a '\n' starting the next one belongs to the same line end. */
  private pendingCr = false;
  private event = '';
  private data: string[] = [];
  private lastId: string | undefined;

  /** True when no event is half read: everything fed so far was whole events and comments. */
  get idle(): boolean {
    return this.buffer === '' && this.event === '' && this.data.length === 0;
  }

  /** Feeds decoded text; returns the events it completed, in order. */
  push(text: string): SseMessage[] {
    if (!this.started) {
      this.started = true;
      if (text.startsWith('\ufeff')) text = text.slice(1);
    }
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const messages: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A lone '\r' at the end may be the first half of '\r\n': keep the line, remember the '\r'.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) this.pendingCr = true;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message !== undefined) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.options.onComment?.(line.slice(1).trim());
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    // `retry` and unknown fields are ignored: the client owns its reconnect delays.
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const event = this.event || 'message';
    const data = this.data;
    this.event = '';
    this.data = [];
    if (data.length === 0) return undefined;
    return { event, data: data.join('\n'), id: this.lastId };
  }
}
