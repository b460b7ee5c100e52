// How `poolscope pools` prints pools: kubectl-style columns, one pool a row, ordered by key. With regions
// (docs/contract.md §7) a REGIONS column (the pool's lease regions) and, after the table, a line per region.
import { poolKey, type ListedPool, type RegionStatus } from '../../contract/index.js';

const COLUMNS = ['CLUSTER', 'NAMESPACE', 'NAME', 'MODEL', 'STATE', 'CAPACITY', 'FRONTENDS', 'LOCATION'] as const;
const REGIONS_COLUMN = 'REGIONS';
const NONE = '<none>';

export interface TableOptions {
  /** Add the REGIONS column: when the reply carries `regions` (the service has regions configured). */
  regions?: boolean;
}

/** The headers, REGIONS last when asked for. */
export function tableColumns(options: TableOptions = {}): string[] {
  return options.regions ? [...COLUMNS, REGIONS_COLUMN] : [...COLUMNS];
}

/** The cells of one pool; `state` overrides the pool's (`deleted` in a watch). */
export function poolRow(pool: ListedPool, state: string = pool.state, options: TableOptions = {}): string[] {
  const capacity = pool.capacity.map((c) => `${c.name}=${c.value}`).join(',');
  const location = [pool.location.region, pool.location.zone].filter((part) => part !== undefined && part !== '').join('/');
  const cells = [
    pool.cluster_id,
    pool.namespace,
    pool.name,
    pool.model,
    state,
    capacity || NONE,
    String(pool.frontends.length),
    location || NONE,
  ];
  if (options.regions) cells.push((pool.lease_regions ?? []).join(',') || NONE);
  return cells;
}

export function sortPools(pools: Iterable<ListedPool>): ListedPool[] {
  return [...pools].sort((a, b) => compare(poolKey(a), poolKey(b)));
}

/** Column widths: each column as wide as its widest cell (header included). */
export function columnWidths(rows: readonly string[][], options: TableOptions = {}): number[] {
  return tableColumns(options).map((header, i) => Math.max(header.length, ...rows.map((row) => row[i]!.length)));
}

/** One line; cells padded to `widths` with three spaces between columns, no trailing space. */
export function formatRow(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
    .join('   ')
    .trimEnd();
}

/** The header and one row per pool, each line ending in '\n'. */
export function formatTable(pools: Iterable<ListedPool>, options: TableOptions = {}): { text: string; widths: number[] } {
  const rows = sortPools(pools).map((pool) => poolRow(pool, pool.state, options));
  const widths = columnWidths(rows, options);
  const lines = [formatRow(tableColumns(options), widths), ...rows.map((row) => formatRow(row, widths))];
  return { text: lines.map((line) => `${line}\n`).join(''), widths };
}

/**
 * One region's status as a line (docs/contract.md §7), e.g.
 * `region eu-west-1: complete`,
 * `region eu-west-1: incomplete (connect ETIMEDOUT) since 2025-01-01T00:00:00.000Z`,
 * `region eu-west-1: dropped (connect ETIMEDOUT) since 2025-01-01T00:00:00.000Z` (its pools left the list).
 */
export function formatRegion(region: RegionStatus): string {
  const word = region.dropped ? 'dropped' : region.complete ? 'complete' : 'incomplete';
  const reason = region.reason === undefined || region.reason === '' ? '' : ` (${region.reason})`;
  const since = region.unreachable_since === undefined ? '' : ` since ${region.unreachable_since}`;
  return `region ${region.name}: ${word}${reason}${since}`;
}

/** A line per region, in the reply's order (sorted by name), each ending in '\n'. */
export function formatRegions(regions: readonly RegionStatus[]): string {
  return regions.map((region) => `${formatRegion(region)}\n`).join('');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
