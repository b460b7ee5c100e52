// Starts an echo server (bench/load/echo-server.ts: a raw node:http one or a bare Hono one) in a process of its own.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnTracked, stopChild } from './children.js';

const ECHO = fileURLToPath(new URL('../load/echo-server.ts', import.meta.url));

export interface EchoServer {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

export type EchoKind = 'raw' | 'hono';

export async function startEchoServer(kind: EchoKind): Promise<EchoServer> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', ECHO, kind, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await firstLinePort(child);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => stopChild(child) };
}

function firstLinePort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`echo server did not start: ${stderr}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const nl = stdout.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      resolve((JSON.parse(stdout.slice(0, nl)) as { port: number }).port);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`echo server exited with ${code}: ${stderr}`));
    });
  });
}
