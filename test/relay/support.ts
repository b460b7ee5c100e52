// Helpers of the relay and router client tests: the real service in-process (startServe, the code the
// binary runs) on a chosen or free port, a self-signed certificate, and a socket that never answers.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { DEFAULT_CONFIG, type ServeConfig } from '../../src/service/config.js';
import { startServe } from '../../src/service/start.js';
import { poolListSchema, type PoolList, type RegistrationInput } from '../../src/contract/index.js';
import { registration } from '../support/service.js';

export interface InProcessService {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** `poolscope serve` in this process, on 127.0.0.1 (port 0: a free one), logging nowhere. */
export async function startService(overrides: Partial<ServeConfig> = {}, port = 0): Promise<InProcessService> {
  const config: ServeConfig = { ...DEFAULT_CONFIG, listen: { host: '127.0.0.1', port }, ...overrides };
  const handle = await startServe(config, pino({ level: 'silent' }));
  const bound = handle.server.address.port;
  return { url: handle.server.url, port: bound, stop: () => handle.stop() };
}

export async function listPools(url: string): Promise<PoolList> {
  return poolListSchema.parse(await (await fetch(`${url}/pools`)).json());
}

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

/** The valid registration of test/support/service.ts, typed for startRelay (overrides may break it on purpose). */
export function relayRegistration(overrides: Record<string, unknown> = {}): RegistrationInput {
  return registration(overrides) as RegistrationInput;
}
