// Slices in, pool endpoints out: names each slice (naming.ts), keeps the pool slices (slice-cache.ts),
// recomputes the pools an event touched (endpoints.ts) and reports only pools whose endpoints changed.
// It logs each slice warning once per entry into its condition, never per event.
import type { Logger } from 'pino';
import type { PoolKey } from '../contract/index.js';
import { computePoolEndpoints, computeRouters, type EndpointsOptions } from './endpoints.js';
import { nameSlice, ROUTERS_KEY, type NamingOptions, type SliceRole } from './naming.js';
import { SliceCache, type SliceEvent } from './slice-cache.js';
import { sliceId, type EndpointSlice, type SliceId } from './slice.js';
import type { PoolEndpoints, SliceRouter } from './types.js';

export interface PoolSliceViewOptions extends NamingOptions, EndpointsOptions {
  /** `--router-port-name`: the routers' port in the Global Router Service's slices (with routerServiceName). */
  routerPortName?: string;
  logger: Logger;
  /** Each warning logged about a frontend slice without the named port (for metrics). */
  onWarning?: (kind: 'frontend_slice_without_port') => void;
}

export interface PoolUpdate {
  key: PoolKey;
  /** null: no slice names the pool any more. */
  endpoints: PoolEndpoints | null;
}

export class PoolSliceView {
  private readonly cache = new SliceCache((slice) => this.classify(slice));
  /** The endpoints last reported per key. */
  private readonly reported = new Map<PoolKey, PoolEndpoints>();
  /** Slices whose naming warning was logged, with its text (a new text is a new condition). */
  private readonly namingWarned = new Map<SliceId, string>();
  /** Frontend slices logged for lacking the named port. */
  private readonly portWarned = new Set<SliceId>();
  /** The Global Router Service's routers as last computed. */
  private routerList: SliceRouter[] = [];
  /** The routers changed since routersChanged() was last asked. */
  private routersDirty = true;

  constructor(private readonly options: PoolSliceViewOptions) {}

  /** A full list: the whole view. Keys that were known and are missing now are gone. */
  relist(slices: readonly EndpointSlice[]): Map<PoolKey, PoolEndpoints> {
    const listed = new Set(slices.map(sliceId));
    for (const id of [...this.namingWarned.keys()]) if (!listed.has(id)) this.namingWarned.delete(id);
    this.cache.relist(slices);
    this.reported.clear();
    for (const key of this.cache.keys()) if (key !== ROUTERS_KEY) this.reported.set(key, this.compute(key));
    this.computeRouters();
    this.routersDirty = true;
    this.prunePortWarnings();
    return new Map(this.reported);
  }

  /** The Global Router Service's routers, sorted by id. */
  routers(): SliceRouter[] {
    return this.routerList;
  }

  /** Whether the routers changed since the last call (a relist always counts as a change). */
  routersChanged(): boolean {
    const dirty = this.routersDirty;
    this.routersDirty = false;
    return dirty;
  }

  private computeRouters(): void {
    const { routerServiceName, routerPortName } = this.options;
    if (routerServiceName === undefined || routerPortName === undefined) return;
    const next = computeRouters(this.cache.slicesOf(ROUTERS_KEY), routerPortName);
    if (JSON.stringify(next) !== JSON.stringify(this.routerList)) this.routersDirty = true;
    this.routerList = next;
  }

  /** One watch event: the pools whose endpoints changed. */
  apply(event: SliceEvent): PoolUpdate[] {
    if (event.type === 'DELETED') this.namingWarned.delete(sliceId(event.slice));
    const updates: PoolUpdate[] = [];
    for (const key of this.cache.apply(event)) {
      if (key === ROUTERS_KEY) {
        this.computeRouters();
        continue;
      }
      const endpoints = this.cache.slicesOf(key).length > 0 ? this.compute(key) : null;
      const previous = this.reported.get(key) ?? null;
      if (sameEndpoints(previous, endpoints)) continue;
      if (endpoints) this.reported.set(key, endpoints);
      else this.reported.delete(key);
      updates.push({ key, endpoints });
    }
    this.prunePortWarnings();
    return updates;
  }

  /** The endpoints of every pool, as last reported. */
  snapshot(): Map<PoolKey, PoolEndpoints> {
    return new Map(this.reported);
  }

  get sliceCount(): number {
    return this.cache.size;
  }

  private classify(slice: EndpointSlice): { key: PoolKey; role: SliceRole } | undefined {
    const naming = nameSlice(slice, this.options);
    const id = sliceId(slice);
    const warning = naming.kind === 'skip' ? (naming.warn ? naming.reason : undefined) : naming.warning;
    if (warning === undefined) {
      this.namingWarned.delete(id);
    } else if (this.namingWarned.get(id) !== warning) {
      this.namingWarned.set(id, warning);
      // Stryker disable next-line ConditionalExpression: equivalent, a skip has no key, and pino leaves out an undefined field
      const pool = naming.kind === 'pool' ? { pool: naming.key } : {};
      const used = naming.kind === 'pool' ? 'used' : 'skipped';
      this.options.logger.warn({ slice: id, ...pool, reason: warning }, `EndpointSlice ${used}: ${warning}`);
    }
    return naming.kind === 'pool' ? { key: naming.key, role: naming.role } : undefined;
  }

  private compute(key: PoolKey): PoolEndpoints {
    const slices = this.cache.slicesOf(key);
    const { endpoints, frontendSlicesWithoutPort } = computePoolEndpoints(slices, this.options);
    const lacking = new Set(frontendSlicesWithoutPort.map(sliceId));
    for (const { id } of slices) {
      if (!lacking.has(id)) {
        this.portWarned.delete(id);
      } else if (!this.portWarned.has(id)) {
        this.portWarned.add(id);
        this.options.logger.warn(
          { pool: key, slice: id, port_name: this.options.frontendPortName },
          `frontend EndpointSlice has no TCP port named "${this.options.frontendPortName}": its endpoints are not listed as frontends`,
        );
        this.options.onWarning?.('frontend_slice_without_port');
      }
    }
    return endpoints;
  }

  private prunePortWarnings(): void {
    for (const id of this.portWarned) if (!this.cache.has(id)) this.portWarned.delete(id);
  }
}

export function sameEndpoints(a: PoolEndpoints | null, b: PoolEndpoints | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.frontendSlicesWithPort === b.frontendSlicesWithPort &&
    sameList(a.relays, b.relays) &&
    sameList(a.frontends, b.frontends)
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
