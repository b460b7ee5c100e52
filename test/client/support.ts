// Helpers of the router client tests: an HTTP proxy in front of a replica that can cut, hold or garble
// the event stream (what proxies do to SSE), and a replica process started without waiting for its
// health (a replica restarted while Redis is frozen is not healthy, yet serves).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { checkLogStream, environmentWithoutPoolscope, REPO_ROOT } from '../support/process.js';
import { waitFor } from '../support/wait.js';

/** What the proxy does to GET /pools/watch; every other request is passed on. */
export type WatchMode = 'pass' | 'cut' | 'hold' | 'garble-once';

export interface TestProxy {
  url: string;
  mode: WatchMode;
  /** GET /pools/watch requests seen. */
  watchRequests: number;
  /** GET /pools requests seen. */
  listRequests: number;
  /** When set, answers GET /pools/watch instead of `mode` (a scripted stream). */
  onWatch?: (req: IncomingMessage, res: ServerResponse) => void;
  stop(): Promise<void>;
}

export async function startProxy(target: string, mode: WatchMode): Promise<TestProxy> {
  const sockets = new Set<Socket>();
  const proxy: TestProxy = { url: '', mode, watchRequests: 0, listRequests: 0, stop: async () => {} };
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers, agent: false }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    // The client gone (or the proxy stopped): end the upstream request too, as a proxy does.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
  const server = createServer((req, res) => {
    if (!req.url?.startsWith('/pools/watch')) {
      if (req.url?.split('?')[0] === '/pools') proxy.listRequests += 1;
      return forward(req, res);
    }
    proxy.watchRequests += 1;
    if (proxy.onWatch) {
      proxy.onWatch(req, res);
    } else if (proxy.mode === 'cut') {
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>');
    } else if (proxy.mode === 'hold') {
      // A buffering proxy: headers through, the body kept back.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    } else if (proxy.mode === 'garble-once') {
      proxy.mode = 'pass';
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('event: resync\ndata: {"complete": "yes"}\n\n');
    } else {
      forward(req, res);
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  proxy.stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return proxy;
}

export interface ReplicaProcess {
  url: string;
  child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `poolscope serve` on 127.0.0.1:`port`, ready once it answers HTTP at all (whatever /readyz says). */
export async function spawnReplica(args: string[], port: number): Promise<ReplicaProcess> {
  const child = spawn(process.execPath, ['bin/poolscope.js', 'serve', ...args, `--listen=127.0.0.1:${port}`], {
    cwd: REPO_ROOT,
    env: { ...environmentWithoutPoolscope(), POOLSCOPE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  checkLogStream(child.stdout!, 'poolscope serve stdout');
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`poolscope exited: ${stderr}`);
      await fetch(`${url}/readyz`);
      return true;
    },
    { timeoutMs: 15_000, message: `poolscope on ${url}` },
  );
  return {
    url,
    child,
    async stop(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
