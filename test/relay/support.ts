// Helpers of the relay and router client tests: a self-signed certificate, and a socket that never answers.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registration } from '../support/registration.js';
import type { TestService } from '../support/service.js';

// The names test/relay/fallback.test.ts imports from here; the helpers are test/support's.
export { startService } from '../support/service.js';
export { listPools } from '../support/http.js';
export type InProcessService = TestService;
export const relayRegistration = registration;

export const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A self-signed certificate for 127.0.0.1 (its own CA), and a token file; `cleanup()` removes them. */
export function makeTlsFiles(): { dir: string; cert: string; key: string; tokenFile: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'poolscope-tls-'));
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  const tokenFile = join(dir, 'tokens');
  writeFileSync(tokenFile, '# relays\nsecret-token\n');
  return { dir, cert, key, tokenFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A TCP server that accepts connections and never answers: a hung replica. */
export async function startSilentServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What a scripted replica answers to one POST /pools: a status and a JSON body, or nothing at all (it hangs). */
export type ScriptedReply = { status: number; body: unknown } | 'hang';

/**
 * A replica over a real socket whose every POST /pools is answered by `answer` (which sees the request's
 * body), so a test can make it accept, refuse, fail or garble on cue. `bodies` are the bodies received.
 */
export async function startScriptedReplica(answer: (body: Record<string, unknown>) => ScriptedReply): Promise<{
  url: string;
  bodies: Record<string, unknown>[];
  answer: (body: Record<string, unknown>) => ScriptedReply;
  /** Connections open now. */
  readonly connections: number;
  stop(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  const replica = {
    url: '',
    bodies: [] as Record<string, unknown>[],
    answer,
    get connections() {
      return sockets.size;
    },
    stop: async () => {},
  };
  const server = createHttpServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      replica.bodies.push(body);
      const reply = replica.answer(body);
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  replica.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  replica.stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return replica;
}

/** The contract's error body (docs/contract.md §11). */
export const errorBody = (code: string, message: string) => ({ error: { code, message } });
