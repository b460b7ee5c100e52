// The WAN stand-in itself, against an echo server: bytes pass both ways; a delay holds each chunk that
// long each way, in order; a rate limit paces the bytes of every connection together, and a sender
// on a slow link is held back by TCP rather than buffered here; a hold forwards nothing with the sockets
// open; a release passes what was held; a reset drops the connections of the moment while new ones pass.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait.js';

let echo: Server;
let echoPort: number;
let proxy: TcpProxy;
const sockets: Socket[] = [];

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => echo.close(resolve));
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await proxy?.close();
});

/** A client of the proxy that keeps what it receives and notes when it closed. */
interface Client {
  socket: Socket;
  received(): string;
  closed(): boolean;
}

async function open(): Promise<Client> {
  const socket = connect({ host: '127.0.0.1', port: proxy.port });
  sockets.push(socket);
  let data = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString();
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
  });
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  return { socket, received: () => data, closed: () => closed };
}

async function roundTrip(client: Client, text: string): Promise<number> {
  const before = client.received().length;
  const started = performance.now();
  client.socket.write(text);
  await waitFor(() => client.received().length >= before + text.length, { intervalMs: 2, message: `the echo of ${text}` });
  return performance.now() - started;
}

describe('tcp proxy', () => {
  it('passes bytes both ways', async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const client = await open();
    await roundTrip(client, 'hello');
    expect(client.received()).toBe('hello');
  });

  it('delays every chunk each way and keeps their order', async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const client = await open();
    expect(await roundTrip(client, 'warm')).toBeLessThan(100);
    proxy.setDelay(100);
    // There and back: twice the delay at least.
    expect(await roundTrip(client, 'slow')).toBeGreaterThanOrEqual(195);
    // Chunks written apart arrive in the order they were sent.
    const before = client.received().length;
    for (const part of ['a', 'b', 'c', 'd']) {
      client.socket.write(part);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await waitFor(() => client.received().length >= before + 4, { message: 'the four chunks' });
    expect(client.received().slice(before)).toBe('abcd');
    proxy.setDelay(0);
    expect(await roundTrip(client, 'fast')).toBeLessThan(100);
  });

  it('carries no more than its rate, every connection together, and passes everything in order', async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const rate = 1024 * 1024;
    proxy.setRate(rate);
    const [first, second] = [await open(), await open()];
    const payload = (tag: string) => tag.repeat(256 * 1024);
    const started = performance.now();
    // 512 KiB in all, both ways: at 1 MiB/s each way, at least half a second (the two ways overlap).
    await Promise.all([roundTrip(first, payload('a')), roundTrip(second, payload('b'))]);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(((2 * 256 * 1024) / rate) * 1000 * 0.95);
    expect(first.received()).toBe(payload('a'));
    expect(second.received()).toBe(payload('b'));
    // Unlimited again: the same bytes pass far sooner than the limit allowed.
    proxy.setRate(0);
    const fast = performance.now();
    await roundTrip(first, payload('c'));
    expect(performance.now() - fast).toBeLessThan(elapsed);
  });

  it('holds a sender back on a slow link instead of buffering what it sent', async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
    proxy.setRate(256 * 1024);
    const client = await open();
    const size = 32 * 1024 * 1024;
    client.socket.write(Buffer.alloc(size, 'x'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The proxy keeps about a MiB per direction and stopped reading; the kernel's buffers take a few MiB
    // more; the rest is still in the sender's own socket, unsent.
    expect(client.socket.writableLength).toBeGreaterThan(8 * 1024 * 1024);
    proxy.setRate(0);
    await waitFor(() => client.received().length === size, { timeoutMs: 20_000, message: 'all 32 MiB back' });
    expect(client.socket.writableLength).toBe(0);
  });

  it('holds every byte with the sockets open, then passes them in order on release', async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const client = await open();
    await roundTrip(client, 'before;');
    proxy.hold();
    client.socket.write('during-1;');
    client.socket.write('during-2;');
    // Nothing comes back, and nothing closes: the path looks alive and silent.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(client.received()).toBe('before;');
    expect(client.closed()).toBe(false);
    // A connection made during the hold is accepted but silent too.
    const late = await open();
    late.socket.write('late;');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(late.received()).toBe('');

    proxy.release();
    await waitFor(() => client.received() === 'before;during-1;during-2;', { message: 'the held bytes' });
    await waitFor(() => late.received() === 'late;', { message: 'the late connection' });
  });

  it('blackholes the connections of the moment, open and silent, while new ones pass', async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const old = await open();
    await roundTrip(old, 'before;');
    expect(proxy.blackholeExisting()).toBe(1);
    old.socket.write('lost;');
    const fresh = await open();
    await roundTrip(fresh, 'fresh;');
    // The fresh round trip proves the path carries bytes; the old connection got none of its own back.
    expect(old.received()).toBe('before;');
    expect(old.closed()).toBe(false);
    // A release ends holds, not blackholes.
    proxy.release();
    await roundTrip(fresh, 'again;');
    expect(old.received()).toBe('before;');
  });

  it('drops the connections of the moment on reset, while new ones pass', async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
    const [first, second] = [await open(), await open()];
    await roundTrip(first, 'x');
    proxy.reset();
    await waitFor(() => first.closed() && second.closed(), { message: 'both connections to drop' });
    const fresh = await open();
    await roundTrip(fresh, 'again');
    expect(fresh.received()).toBe('again');
  });
});
