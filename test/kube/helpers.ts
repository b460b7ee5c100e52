// Shared by the kube tests: fixtures, a recording listener, an in-memory pino logger, polling.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { PoolKey } from '../../src/contract/index.js';
import { parseEndpointSlice, type EndpointSlice } from '../../src/kube/slice.js';
import type { PoolEndpoints, SliceSourceListener } from '../../src/kube/types.js';

const FIXTURES = new URL('./fixtures/', import.meta.url);

export function fixtureText(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

export function fixtureSlice(path: string): EndpointSlice {
  const parsed = parseEndpointSlice(JSON.parse(fixtureText(path)));
  if ('error' in parsed) throw new Error(`${path}: ${parsed.error}`);
  return parsed.slice;
}

export function fixtureLines(path: string): string[] {
  return fixtureText(path)
    .split('\n')
    .filter((line) => line.trim() !== '');
}

export const DEFAULT_SUFFIXES = { relayServiceSuffix: '-pool-relay', frontendServiceSuffix: '-frontend' } as const;

/** A pino logger writing JSON lines to memory, so tests can assert warnings without printing. */
export function memoryLogger(): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, stream);
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export const silentLogger = (): Logger => pino({ level: 'silent' });

export type ListenerCall =
  | { kind: 'resync'; pools: Map<PoolKey, PoolEndpoints> }
  | { kind: 'update'; key: PoolKey; endpoints: PoolEndpoints | null }
  | { kind: 'status'; synced: boolean; reason: string | undefined };

/** A listener that records every call and keeps the view it describes. */
export class RecordingListener implements SliceSourceListener {
  readonly calls: ListenerCall[] = [];
  readonly view = new Map<PoolKey, PoolEndpoints>();
  synced = false;

  resync(pools: ReadonlyMap<PoolKey, PoolEndpoints>): void {
    this.calls.push({ kind: 'resync', pools: new Map(pools) });
    this.view.clear();
    for (const [key, endpoints] of pools) this.view.set(key, endpoints);
  }

  update(key: PoolKey, endpoints: PoolEndpoints | null): void {
    this.calls.push({ kind: 'update', key, endpoints });
    if (endpoints) this.view.set(key, endpoints);
    else this.view.delete(key);
  }

  status(synced: boolean, reason?: string): void {
    this.calls.push({ kind: 'status', synced, reason });
    this.synced = synced;
  }

  count(kind: ListenerCall['kind']): number {
    return this.calls.filter((c) => c.kind === kind).length;
  }

  statuses(): Array<{ synced: boolean; reason: string | undefined }> {
    return this.calls.flatMap((c) => (c.kind === 'status' ? [{ synced: c.synced, reason: c.reason }] : []));
  }

  updatesFor(key: PoolKey): Array<PoolEndpoints | null> {
    return this.calls.flatMap((c) => (c.kind === 'update' && c.key === key ? [c.endpoints] : []));
  }
}

/** Poll until `condition` holds; fail with `what` after the deadline. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
