// The fleet overview: pools by region and state, and the same by model, as the feed counts them (a pool
// once in every region holding a live lease for it, else in the "no lease" row). Without regions, one row.
import { OVERVIEW_STATES, type DebugRegion, type FleetOverview, type OverviewRow } from '../types.js';
import { el } from './dom.js';

export interface OverviewViewOptions {
  container: HTMLElement;
}

export class OverviewView {
  private overview: FleetOverview | null = null;
  private regions: DebugRegion[] | null = null;

  constructor(private readonly options: OverviewViewOptions) {}

  show(overview: FleetOverview): void {
    this.overview = overview;
    this.render();
  }

  /** The regions (to mark the home one and those dropped); null without regions. */
  setRegions(regions: DebugRegion[] | null): void {
    this.regions = regions;
    this.render();
  }

  private render(): void {
    const overview = this.overview;
    if (!overview) return;
    const withRegions = this.regions !== null;
    this.options.container.replaceChildren(
      el(
        'div',
        { class: 'overview-table' },
        el('h3', {}, withRegions ? 'Pools by region' : 'Pools'),
        el(
          'table',
          { class: 'counts', 'data-overview': 'region' },
          el('thead', {}, el('tr', {}, el('th', {}, withRegions ? 'region' : ''), ...stateHeads())),
          el('tbody', {}, ...overview.by_region.map((row) => el('tr', rowAttrs(row), el('th', {}, this.regionLabel(row)), ...cells(row)))),
        ),
      ),
      el(
        'div',
        { class: 'overview-table' },
        el('h3', {}, 'By model'),
        el(
          'table',
          { class: 'counts', 'data-overview': 'model' },
          el('thead', {}, el('tr', {}, el('th', {}, 'model'), withRegions ? el('th', {}, 'region') : null, ...stateHeads())),
          el(
            'tbody',
            {},
            ...overview.by_model.flatMap(({ model, rows }) =>
              rows.map((row, i) =>
                el(
                  'tr',
                  { ...rowAttrs(row), 'data-model': model ?? '', class: i === 0 ? 'first' : null },
                  i === 0 ? el('th', { class: 'model', rowspan: rows.length }, model ?? el('span', { class: 'muted' }, 'no registration')) : null,
                  withRegions ? el('td', { class: 'region-name' }, this.regionLabel(row)) : null,
                  ...cells(row),
                ),
              ),
            ),
            overview.by_model.length === 0 ? el('tr', {}, el('td', { class: 'muted', colspan: OVERVIEW_STATES.length + 3 }, 'no pools')) : null,
          ),
        ),
      ),
    );
  }

  private regionLabel(row: OverviewRow): Node | string {
    if (row.region === null) return el('span', { class: 'muted' }, 'no lease');
    if (this.regions === null) return 'all pools';
    const region = this.regions.find((r) => r.name === row.region);
    return el(
      'span',
      {},
      row.region,
      region?.home ? el('span', { class: 'home-mark' }, 'home') : null,
      region?.status === 'dropped' ? el('span', { class: 'dropped-mark' }, 'dropped') : null,
    );
  }
}

function stateHeads(): HTMLElement[] {
  return [...OVERVIEW_STATES.map((state) => el('th', { class: 'num' }, el('span', { class: `badge state-${state}` }, state))), el('th', { class: 'num' }, 'total')];
}

function rowAttrs(row: OverviewRow): Record<string, string | boolean> {
  return row.region === null ? { 'data-no-lease': true } : { 'data-region': row.region };
}

function cells(row: OverviewRow): HTMLElement[] {
  return [
    ...OVERVIEW_STATES.map((state) => {
      const n = row.counts[state];
      return el('td', { class: `num${n === 0 ? ' zero' : ''}`, 'data-state': state, 'data-count': n }, String(n));
    }),
    el('td', { class: 'num total', 'data-total': row.total }, String(row.total)),
  ];
}
