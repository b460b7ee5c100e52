// A server a test scripts (node:http, node:https or a bare TCP one), on a free loopback port: its base URL,
// and a stop() that ends the connections still open (keep-alive ones, streams held) before closing, so a
// test never waits on them.
import type { Server, Socket } from 'node:net';

export interface LoopbackServer {
  url: string;
  stop(): Promise<void>;
}

export async function listenOnFreePort(server: Server): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
