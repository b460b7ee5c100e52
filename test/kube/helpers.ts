// Shared by the kube tests: fixtures, versions of a slice, and a recording listener.
import { readFileSync } from 'node:fs';
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

/** A copy of `slice` at another resourceVersion, changed by `change`. */
export function version(slice: EndpointSlice, resourceVersion: string, change?: (copy: EndpointSlice) => void): EndpointSlice {
  const copy = structuredClone(slice);
  copy.metadata.resourceVersion = resourceVersion;
  change?.(copy);
  return copy;
}

export function fixtureLines(path: string): string[] {
  return fixtureText(path)
    .split('\n')
    .filter((line) => line.trim() !== '');
}

export const DEFAULT_SUFFIXES = { relayServiceSuffix: '-pool-relay', frontendServiceSuffix: '-frontend' } as const;

export type ListenerCall =
  | { kind: 'resync'; pools: Map<PoolKey, PoolEndpoints> }
  | { kind: 'update'; key: PoolKey; endpoints: PoolEndpoints | null }
  | { kind: 'status'; synced: boolean; reason: string | undefined }
  | { kind: 'down'; reason: string | undefined };

/** A listener that records every call and keeps the view it describes. */
export class RecordingListener implements SliceSourceListener {
  readonly calls: ListenerCall[] = [];
  readonly view = new Map<PoolKey, PoolEndpoints>();
  synced = false;
  /** Why the loop is down (it failed unexpectedly and restarts); undefined while it runs. */
  down: string | undefined;

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

  loopDown(reason: string | undefined): void {
    this.calls.push({ kind: 'down', reason });
    this.down = reason;
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
