// How `poolscope pools` prints pools: kubectl-style columns, one pool a row, ordered by key.
import { poolKey, type ListedPool } from '../../contract/index.js';

const COLUMNS = ['CLUSTER', 'NAMESPACE', 'NAME', 'MODEL', 'STATE', 'CAPACITY', 'FRONTENDS', 'LOCATION'] as const;
const NONE = '<none>';

/** The cells of one pool; `state` overrides the pool's (`deleted` in a watch). */
export function poolRow(pool: ListedPool, state: string = pool.state): string[] {
  const capacity = pool.capacity.map((c) => `${c.name}=${c.value}`).join(',');
  const location = [pool.location.region, pool.location.zone].filter((part) => part !== undefined && part !== '').join('/');
  return [
    pool.cluster_id,
    pool.namespace,
    pool.name,
    pool.model,
    state,
    capacity || NONE,
    String(pool.frontends.length),
    location || NONE,
  ];
}

export function sortPools(pools: Iterable<ListedPool>): ListedPool[] {
  return [...pools].sort((a, b) => compare(poolKey(a), poolKey(b)));
}

/** Column widths: each column as wide as its widest cell (header included). */
export function columnWidths(rows: readonly string[][]): number[] {
  return COLUMNS.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i]!.length)));
}

/** One line; cells padded to `widths` with three spaces between columns, no trailing space. */
export function formatRow(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
    .join('   ')
    .trimEnd();
}

/** The header and one row per pool, each line ending in '\n'. */
export function formatTable(pools: Iterable<ListedPool>): { text: string; widths: number[] } {
  const rows = sortPools(pools).map((pool) => poolRow(pool));
  const widths = columnWidths(rows);
  const lines = [formatRow(COLUMNS, widths), ...rows.map((row) => formatRow(row, widths))];
  return { text: lines.map((line) => `${line}\n`).join(''), widths };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
