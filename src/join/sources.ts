// The join's completeness bookkeeping: every source (each region's store, the Kubernetes slices, the
// memory store's warm-up), whether it is synced and why not, and whether it was ever read in full. The
// view is complete only when every source is (docs/contract.md §5, §7).
import type { RegionStatus } from '../contract/index.js';
import type { Completeness } from './listed-view.js';

export interface SourceStatus {
  /** `store` (without regions), `region:<name>`, `kubernetes` or `warmup`. */
  name: string;
  synced: boolean;
  reason?: string;
}

export interface SourceBookOptions {
  /** Every change of completeness or of its reasons. */
  onChange: (completeness: Completeness) => void;
  /** The regions' entries for the replies, when regions are configured. */
  regions?: () => RegionStatus[];
}

export class SourceBook {
  private readonly sources = new Map<string, SourceStatus>();
  private readonly everSynced = new Set<string>();

  constructor(private readonly options: SourceBookOptions) {}

  /** Register a source (not synced yet) without publishing: call `publish()` once all are in. */
  add(status: SourceStatus): void {
    this.sources.set(status.name, status);
  }

  has(name: string): boolean {
    return this.sources.has(name);
  }

  get(name: string): SourceStatus | undefined {
    return this.sources.get(name);
  }

  set(status: SourceStatus): void {
    this.sources.set(status.name, status);
    if (status.synced) this.everSynced.add(status.name);
    this.publish();
  }

  statuses(): SourceStatus[] {
    return [...this.sources.values()].map((s) => ({ ...s }));
  }

  /** Each of `names` has been read in full at least once (/readyz). */
  everSyncedAll(names: readonly string[]): boolean {
    return names.every((name) => this.everSynced.has(name));
  }

  publish(): void {
    const reasons = [...this.sources.values()].filter((s) => !s.synced).map((s) => s.reason ?? `${s.name}: not synced`);
    const regions = this.options.regions?.();
    this.options.onChange({ complete: reasons.length === 0, reasons, ...(regions ? { regions } : {}) });
  }
}
