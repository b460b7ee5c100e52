// Every pool this replica holds, grouped by state (in the chart's order), with counts and a filter.
// With regions, each pool names the regions holding a live lease for it (docs/contract.md §7).
import type { DebugPoolSummary } from '../types.js';
import { el, formatTime } from './dom.js';

export interface PoolListOptions {
  container: HTMLElement;
  count: HTMLElement;
  filter: HTMLInputElement;
  /** State keys in the order the chart declares them. */
  stateOrder: string[];
  onSelect: (key: string) => void;
}

export class PoolList {
  private readonly pools = new Map<string, DebugPoolSummary>();
  private selected: string | null = null;

  constructor(private readonly options: PoolListOptions) {
    options.filter.addEventListener('input', () => this.render());
  }

  replace(pools: DebugPoolSummary[]): void {
    this.pools.clear();
    for (const pool of pools) this.pools.set(pool.pool, pool);
    this.render();
  }

  apply(upserted: DebugPoolSummary[], removed: string[]): void {
    for (const pool of upserted) this.pools.set(pool.pool, pool);
    for (const key of removed) this.pools.delete(key);
    this.render();
  }

  select(key: string | null): void {
    this.selected = key;
    this.render();
  }

  render(): void {
    const query = this.options.filter.value.trim().toLowerCase();
    const shown = [...this.pools.values()].filter(
      (p) => !query || p.pool.toLowerCase().includes(query) || p.state.includes(query) || (p.model ?? '').toLowerCase().includes(query),
    );
    const byState = new Map<string, DebugPoolSummary[]>();
    for (const state of this.options.stateOrder) byState.set(state, []);
    for (const pool of shown.sort((a, b) => a.pool.localeCompare(b.pool))) {
      if (!byState.has(pool.state)) byState.set(pool.state, []);
      byState.get(pool.state)!.push(pool);
    }
    this.options.count.textContent = query ? `${shown.length} of ${this.pools.size} pools` : `${this.pools.size} pools`;
    const groups = [...byState].map(([state, pools]) =>
      el(
        'section',
        { class: `group${pools.length === 0 ? ' empty' : ''}`, 'data-group': state },
        el('h2', {}, el('span', { class: `badge state-${state}` }, state), ' ', el('span', { class: 'count', 'data-count': pools.length }, String(pools.length))),
        el(
          'ul',
          {},
          ...pools.map((pool) => {
            const item = el(
              'li',
              { class: pool.pool === this.selected ? 'selected' : null, 'data-pool': pool.pool, 'data-state': pool.state },
              el('button', { type: 'button' }, el('span', { class: 'key' }, pool.pool), el('span', { class: 'meta' }, meta(pool))),
            );
            item.querySelector('button')!.addEventListener('click', () => this.options.onSelect(pool.pool));
            return item;
          }),
        ),
      ),
    );
    this.options.container.replaceChildren(...groups);
  }
}

function meta(pool: DebugPoolSummary): string {
  const regions = pool.lease_regions.filter((region) => region !== '');
  const where = regions.length > 0 ? ` · ${regions.join(' + ')}` : '';
  return `${pool.model ?? 'no registration'} · ${pool.listed ? 'listed' : 'not listed'}${where} · since ${formatTime(pool.since_ms)}`;
}
