// The routers this replica lists (docs/contract.md §10): each one's id, url and source, grouped by region
// ("" for none: "no region") then by source, in the order of GET /debug/routers. Fed by the routers' own
// watch stream (resync, upsert, delete), so a router that registers, lapses or comes from --router or the
// Global Router Service's slices shows here without a reload; a note says when routers may be missing.
import type { ListedRouter, RouterList } from '../../contract/router.js';
import { el } from './dom.js';

export interface RouterListOptions {
  container: HTMLElement;
}

export type RouterStreamState = 'connecting' | 'live' | 'reconnecting' | 'refused';

export class RouterListView {
  private readonly routers = new Map<string, ListedRouter>();
  private complete: boolean | null = null;
  private reasons: string[] = [];
  private stream: { state: RouterStreamState; detail: string } = { state: 'connecting', detail: '' };

  constructor(private readonly options: RouterListOptions) {
    this.render();
  }

  /** A `resync`: the whole list (the body of GET /routers). */
  replace(list: RouterList): void {
    this.routers.clear();
    for (const router of list.routers) this.routers.set(router.id, router);
    if (list.complete !== this.complete) this.reasons = [];
    this.complete = list.complete;
    this.render();
  }

  upsert(router: ListedRouter): void {
    this.routers.set(router.id, router);
    this.render();
  }

  remove(id: string): void {
    this.routers.delete(id);
    this.render();
  }

  /** Why the list is incomplete (from GET /debug/routers); ignored once it is complete again. */
  setReasons(reasons: string[]): void {
    if (this.complete !== false) return;
    this.reasons = reasons;
    this.render();
  }

  setStream(state: RouterStreamState, detail = ''): void {
    this.stream = { state, detail };
    this.render();
  }

  private render(): void {
    const { container } = this.options;
    container.dataset.complete = this.complete === null ? '' : String(this.complete);
    container.dataset.count = String(this.routers.size);
    container.dataset.connection = this.stream.state;
    const count = this.routers.size === 1 ? '1 router' : `${this.routers.size} routers`;
    const children: HTMLElement[] = [
      el(
        'div',
        { class: 'routers-head' },
        el('h3', {}, 'Routers'),
        el('span', { class: 'muted', 'data-router-count': this.routers.size }, count),
        el('span', { class: 'router-stream muted' }, streamText(this.stream.state, this.stream.detail)),
      ),
    ];
    if (this.complete === false) {
      children.push(
        el(
          'div',
          { class: 'routers-incomplete' },
          el('strong', {}, 'Incomplete list: routers may be missing.'),
          this.reasons.length > 0 ? el('ul', {}, ...this.reasons.map((reason) => el('li', {}, reason))) : null,
        ),
      );
    }
    // Before the first resync nothing is known yet: the head says "connecting…".
    if (this.routers.size > 0) children.push(this.table());
    else if (this.complete !== null) children.push(el('p', { class: 'muted routers-empty' }, 'No routers listed.'));
    container.replaceChildren(...children);
  }

  private table(): HTMLElement {
    const rows: HTMLElement[] = [];
    for (const [region, sources] of grouped(this.routers.values())) {
      const inRegion = [...sources.values()].reduce((n, routers) => n + routers.length, 0);
      let first = true;
      for (const [source, routers] of sources) {
        for (const router of routers) {
          rows.push(
            el(
              'tr',
              { 'data-router': router.id, 'data-region': region, 'data-source': source },
              first ? el('th', { class: 'region-name', rowspan: inRegion }, region === '' ? el('span', { class: 'muted' }, 'no region') : region) : null,
              el('td', {}, el('span', { class: `source source-${source}` }, source)),
              el('td', { class: 'router-id' }, router.id),
              el('td', { class: 'router-url' }, router.url),
              el('td', { class: 'muted' }, details(router)),
            ),
          );
          first = false;
        }
      }
    }
    return el(
      'table',
      { class: 'routers-table' },
      el('thead', {}, el('tr', {}, el('th', {}, 'region'), el('th', {}, 'source'), el('th', {}, 'id'), el('th', {}, 'url'), el('th', {}, ''))),
      el('tbody', {}, ...rows),
    );
  }
}

/** By region then source, both sorted as GET /debug/routers sorts them; routers by id within. */
function grouped(routers: Iterable<ListedRouter>): Map<string, Map<string, ListedRouter[]>> {
  const byRegion = new Map<string, Map<string, ListedRouter[]>>();
  const sorted = [...routers].sort((a, b) => compare(a.id, b.id));
  for (const router of sorted) {
    const region = router.region ?? '';
    let sources = byRegion.get(region);
    if (sources === undefined) byRegion.set(region, (sources = new Map()));
    sources.set(router.source, [...(sources.get(router.source) ?? []), router]);
  }
  const entries = [...byRegion].sort(([a], [b]) => compare(a, b));
  return new Map(entries.map(([region, sources]) => [region, new Map([...sources].sort(([a], [b]) => compare(a, b)))]));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The zone and, for a registered router with regions, the regions holding its lease. */
function details(router: ListedRouter): string {
  const parts: string[] = [];
  if (router.zone) parts.push(`zone ${router.zone}`);
  if (router.lease_regions && router.lease_regions.length > 0) parts.push(`leased in ${router.lease_regions.join(' + ')}`);
  return parts.join(' · ');
}

function streamText(state: RouterStreamState, detail: string): string {
  switch (state) {
    case 'connecting':
      return 'connecting…';
    case 'live':
      return '';
    case 'reconnecting':
      return 'reconnecting…';
    case 'refused':
      return `not followed: ${detail} (retrying)`;
  }
}
