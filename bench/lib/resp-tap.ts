// A Redis protocol tap for the regions benchmark: a TCP relay placed between a replica and the WAN proxy
// in front of a remote region's Redis (replica → tap → proxy → Redis). It forwards every byte at once,
// both ways, adding no delay of its own (one local hop), and notes each command a connection sends and
// when its reply came back, as the replica sees them: which command (an XREAD that wakes the change log
// follower, the read-changes script that then reads the entries), when it left, when its reply arrived
// and whether the reply was empty (an XREAD BLOCK window that passed with nothing new). That is how the
// benchmark tells where the time of a cross-region follow goes (docs/contract.md §7).
import { connect, createServer, type Socket } from 'node:net';
import { listenOnLoopback } from '../../test/support/tcp-proxy.js';

export interface TappedCommand {
  /** The tapped connection's number (in the order they were accepted). */
  connection: number;
  /** CLIENT SETNAME of the connection when it sent one (`poolscope:reader`, `poolscope:changes`). */
  connectionName: string | undefined;
  /** `xread`, `read-changes` (the change log script), or the command's name in lower case. */
  command: string;
  /** performance.now() when the command's last byte left the replica's side. */
  sentAt: number;
  /** performance.now() when its reply's last byte arrived back. */
  repliedAt: number;
  /** The reply was a nil (an XREAD whose BLOCK window passed with nothing new). */
  nil: boolean;
}

export interface RespTap {
  readonly port: number;
  /** Every command answered since the tap started (or since clear()). */
  readonly commands: readonly TappedCommand[];
  clear(): void;
  close(): Promise<void>;
}

export async function startRespTap(target: { host: string; port: number }): Promise<RespTap> {
  const commands: TappedCommand[] = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer({ allowHalfOpen: false }, (client) => {
    const connection = ++accepted;
    const upstream = connect(target);
    const state: { name: string | undefined; pending: { command: string; sentAt: number }[] } = { name: undefined, pending: [] };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', () => {});
      // Either side closing ends the other at once, as it would end the connection without the tap.
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    const requests = new RespStream((value, at) => {
      const args = Array.isArray(value) ? value.map(String) : [];
      const name = (args[0] ?? '?').toLowerCase();
      if (name === 'client' && args[1]?.toLowerCase() === 'setname') state.name = args[2];
      state.pending.push({ command: classify(name, args), sentAt: at });
    }, true);
    const replies = new RespStream((value, at) => {
      const request = state.pending.shift();
      if (!request) return;
      commands.push({ connection, connectionName: state.name, command: request.command, sentAt: request.sentAt, repliedAt: at, nil: value === null });
    }, false);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      requests.push(chunk, performance.now());
    });
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      replies.push(chunk, performance.now());
    });
  });
  await listenOnLoopback(server);
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the tap has no port');
  return {
    port: address.port,
    get commands() {
      return commands;
    },
    clear: () => void commands.splice(0),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The change log follower's two commands by their shape (follow-changes.ts); others by name. */
function classify(name: string, args: string[]): string {
  if ((name === 'evalsha' || name === 'eval') && args[2] === '1' && args[3]?.endsWith(':changes')) return 'read-changes';
  return name;
}

/**
 * An incremental RESP2/RESP3 reader: calls `onValue` with each complete value and the time of the chunk
 * that completed it. `decode`: build the value (commands: arrays of bulk strings); otherwise only tell a
 * nil from anything else (replies may be large; they are skipped over, not built).
 */
class RespStream {
  private buffer: Buffer = Buffer.alloc(0);

  constructor(
    private readonly onValue: (value: unknown, at: number) => void,
    private readonly decode: boolean,
  ) {}

  push(chunk: Buffer, at: number): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let offset = 0;
    for (;;) {
      const parsed = this.value(offset);
      if (parsed === undefined) break;
      offset = parsed.end;
      this.onValue(parsed.value, at);
    }
    this.buffer = offset === this.buffer.length ? Buffer.alloc(0) : this.buffer.subarray(offset);
  }

  /** The value starting at `offset` and where it ends, or undefined while it is incomplete. */
  private value(offset: number): { value: unknown; end: number } | undefined {
    const lineEnd = this.buffer.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const type = String.fromCharCode(this.buffer[offset]!);
    const line = this.buffer.toString('latin1', offset + 1, lineEnd);
    const next = lineEnd + 2;
    switch (type) {
      case '_':
        return { value: null, end: next };
      case '+':
      case '-':
      case ':':
      case ',':
      case '(':
      case '#':
        return { value: line, end: next };
      case '$':
      case '!':
      case '=': {
        const length = Number(line);
        if (length < 0) return { value: null, end: next };
        if (this.buffer.length < next + length + 2) return undefined;
        return { value: this.decode ? this.buffer.toString('utf8', next, next + length) : true, end: next + length + 2 };
      }
      case '*':
      case '~':
      case '>':
      case '%':
      case '|': {
        const count = Number(line);
        if (count < 0) return { value: null, end: next };
        const elements = type === '%' || type === '|' ? count * 2 : count;
        const items: unknown[] = [];
        let end = next;
        for (let i = 0; i < elements; i += 1) {
          const item = this.value(end);
          if (item === undefined) return undefined;
          if (this.decode) items.push(item.value);
          end = item.end;
        }
        // An attribute (`|`) precedes the value it describes.
        if (type === '|') return this.value(end);
        return { value: this.decode ? items : true, end };
      }
      default:
        // An inline command (plain text line): its words.
        return { value: this.decode ? (type + line).split(' ') : true, end: next };
    }
  }
}
