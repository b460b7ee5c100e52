// The /debug fleet overview: pools by region and state, and the same by model, counted from the
// pools' contexts. A pool is counted once in every region holding a live lease for it (a PoolRelay that
// failed over shows in both regions while both leases live, docs/contract.md §7), and once in the
// no-lease row when it holds none (unregistered, lapsed). Without regions there is one row, region '',
// counting every pool. A pure function of its input: the feed calls it when a pool changed.
import type { PoolContext } from '../../machines/pool.machine.js';
import { OVERVIEW_STATES, type FleetOverview, type OverviewRow, type OverviewState } from './types.js';

const COUNTED = new Set<string>(OVERVIEW_STATES);

export interface OverviewOptions {
  /** The configured regions (each gets a row, pools or not); undefined without regions. */
  regions?: readonly string[];
}

export function fleetOverview(contexts: Iterable<PoolContext>, options: OverviewOptions = {}): FleetOverview {
  const withRegions = options.regions !== undefined;
  const byRegion = new Map<string | null, OverviewRow>();
  const byModel = new Map<string | null, Map<string | null, OverviewRow>>();
  for (const region of withRegions ? options.regions! : ['']) byRegion.set(region, emptyRow(region));
  if (withRegions) byRegion.set(null, emptyRow(null));
  for (const context of contexts) {
    if (!COUNTED.has(context.state)) continue;
    const state = context.state as OverviewState;
    const model = context.registration?.model ?? null;
    let modelRows = byModel.get(model);
    if (!modelRows) byModel.set(model, (modelRows = new Map()));
    for (const region of bucketsOf(context, withRegions)) {
      count(byRegion, region, state);
      count(modelRows, region, state);
    }
  }
  return {
    by_region: sortRows([...byRegion.values()]),
    by_model: [...byModel]
      .sort(([a], [b]) => compareNullLast(a, b))
      .map(([model, rows]) => ({ model, rows: sortRows([...rows.values()]) })),
  };
}

/** The rows a pool is counted in: each region with its live lease, else the no-lease row. */
function bucketsOf(context: PoolContext, withRegions: boolean): (string | null)[] {
  if (!withRegions) return [''];
  const regions = Object.keys(context.leases);
  return regions.length > 0 ? regions : [null];
}

function count(rows: Map<string | null, OverviewRow>, region: string | null, state: OverviewState): void {
  let row = rows.get(region);
  if (!row) rows.set(region, (row = emptyRow(region)));
  row.counts[state] += 1;
  row.total += 1;
}

function emptyRow(region: string | null): OverviewRow {
  const counts = Object.fromEntries(OVERVIEW_STATES.map((s) => [s, 0])) as Record<OverviewState, number>;
  return { region, counts, total: 0 };
}

/** Regions by name, the no-lease row last. */
function sortRows(rows: OverviewRow[]): OverviewRow[] {
  return rows.sort((a, b) => compareNullLast(a.region, b.region));
}

function compareNullLast(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}
