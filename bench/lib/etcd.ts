// etcd as a peer in the benchmark: a private single-member etcd (its own data directory in a temporary
// folder, client and peer ports on 127.0.0.1 picked free), driven through its v3 API's HTTP/JSON gateway
// (/v3/lease/grant, /v3/kv/put, /v3/watch; keys and values in base64), which etcd documents as its API
// for clients without gRPC. No etcd client library is installed, and none is needed for this.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/support/redis-server.js';
import { spawnTracked, stopChild } from './children.js';

export const ETCD_MISSING = 'etcd not found: apt-get install etcd-server to add the peer';

/** `etcd --version`'s first line, or undefined when no etcd is on the PATH. */
export function etcdVersion(): string | undefined {
  try {
    return execFileSync('etcd', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0]!.trim();
  } catch {
    return undefined;
  }
}

export interface PrivateEtcd {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** Starts etcd with its defaults (heartbeat 100 ms, election timeout 1 s) and waits until it answers. */
export async function startPrivateEtcd(): Promise<PrivateEtcd> {
  const dataDir = await mkdtemp(join(os.tmpdir(), 'bench-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawnTracked(
    'etcd',
    [
      '--name=bench',
      `--data-dir=${join(dataDir, 'data')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=bench=${peer}`,
      '--initial-cluster-state=new',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const stop = async () => {
    await stopChild(child);
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = performance.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`etcd exited with ${child.exitCode}: ${stderr}`);
    }
    // The leader is elected once a write goes through.
    const ready = await fetch(`${url}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: b64('ready'), value: b64('1') }) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { url, dataDir, stop };
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`etcd did not answer within 20 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** The range end that makes a range (or a watch) cover every key starting with `prefix`. */
function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix);
  bytes[bytes.length - 1]! += 1;
  return bytes.toString('base64');
}

async function call<T>(url: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** A lease of `ttlSecs`; etcd may grant a longer one (its minimum TTL), which the reply says. */
export async function grantLease(url: string, ttlSecs: number): Promise<{ id: string; ttlSecs: number }> {
  const reply = await call<{ ID: string; TTL: string }>(url, '/v3/lease/grant', { TTL: ttlSecs });
  return { id: reply.ID, ttlSecs: Number(reply.TTL) };
}

export async function put(url: string, key: string, value: string, lease?: string): Promise<void> {
  await call(url, '/v3/kv/put', lease === undefined ? { key: b64(key), value: b64(value) } : { key: b64(key), value: b64(value), lease });
}

export interface EtcdWatchEvent {
  type: 'PUT' | 'DELETE';
  key: string;
  /** performance.now() when the chunk holding the event arrived. */
  at: number;
}

/** A watch of every key under `prefix` (POST /v3/watch, a stream of JSON lines), open once etcd created it. */
export function watchPrefix(url: string, prefix: string, onEvent: (event: EtcdWatchEvent) => void): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/v3/watch`, { method: 'POST' }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`etcd /v3/watch: ${response.statusCode}`));
        response.resume();
        return;
      }
      let buffer = '';
      response.setEncoding('utf8');
      response.on('error', () => {});
      response.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, end).trim();
          buffer = buffer.slice(end + 1);
          if (line === '') continue;
          const { result } = JSON.parse(line) as {
            result?: { created?: boolean; events?: Array<{ type?: 'PUT' | 'DELETE'; kv: { key: string } }> };
          };
          if (result?.created) resolve({ close: () => request.destroy() });
          for (const event of result?.events ?? []) {
            onEvent({ type: event.type ?? 'PUT', key: Buffer.from(event.kv.key, 'base64').toString(), at });
          }
        }
      });
    });
    request.once('error', reject);
    request.end(JSON.stringify({ create_request: { key: b64(prefix), range_end: prefixEnd(prefix) } }));
  });
}
