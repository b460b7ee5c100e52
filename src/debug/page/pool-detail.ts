// The selected pool: its state, lease countdown, live leases by region (which one's registration is
// shown, docs/contract.md §7), registration, relays, frontends and the timeline of its last transitions
// (newest first) with their causes.
import type { DebugPoolDetail, GraphTransition } from '../types.js';
import { el, formatDuration, formatTime } from './dom.js';

export interface PoolDetailOptions {
  container: HTMLElement;
  transitions: ReadonlyMap<string, GraphTransition>;
  /** The server's clock now (ms). */
  serverNow: () => number;
  /** Regions are configured (each lease is then shown with its region). */
  hasRegions: () => boolean;
}

export class PoolDetailView {
  private pool: DebugPoolDetail | null = null;
  private countdown: HTMLElement | null = null;

  constructor(private readonly options: PoolDetailOptions) {}

  show(pool: DebugPoolDetail | null, key: string | null): void {
    this.pool = pool;
    this.countdown = null;
    const { container } = this.options;
    if (!pool) {
      container.replaceChildren(
        el('p', { class: 'muted' }, key ? `Pool ${key} is not held by this replica (it left more than the retention ago, or never came).` : 'Select a pool to see its state, history and lease.'),
      );
      return;
    }
    this.countdown = el('span', { class: 'countdown', 'data-lease-deadline': pool.lease_deadline_estimate_ms ?? '' });
    container.replaceChildren(
      el(
        'div',
        { class: 'detail-head' },
        el('h2', { 'data-selected-pool': pool.pool }, pool.pool),
        el('span', { class: `badge state-${pool.state}`, 'data-current-state': pool.state }, pool.state),
        el('span', { class: 'muted' }, `${pool.listed ? 'listed by GET /pools' : 'not listed'} · since ${formatTime(pool.since_ms)}`),
      ),
      el(
        'dl',
        { class: 'facts' },
        ...fact('lease', el('span', {}, `${pool.lease} · lease ${formatDuration(pool.lease_ms)}`, pool.lease === 'live' ? el('span', {}, ' · deadline ', this.countdown) : null)),
        ...(this.options.hasRegions() ? fact('leases', leases(pool)) : []),
        ...fact('registration', registration(pool)),
        ...fact('relays', list(pool.relays)),
        ...fact('frontends', list(pool.frontends)),
        ...(pool.frontend_slices_with_port === null ? [] : fact('frontend slices with the port', String(pool.frontend_slices_with_port))),
      ),
      el('h3', {}, `Timeline (last ${pool.history.length})`),
      this.timeline(pool),
    );
    this.tick();
  }

  /** Refresh the countdown (called on a timer: the deadline is known, only the clock moves). */
  tick(): void {
    if (!this.pool || !this.countdown) return;
    const deadline = this.pool.lease_deadline_estimate_ms;
    if (deadline === null) {
      this.countdown.textContent = 'unknown';
      return;
    }
    const left = deadline - this.options.serverNow();
    this.countdown.textContent = left > 0 ? `in ${formatDuration(left)}` : `passed ${formatDuration(-left)} ago (lapse pending)`;
    this.countdown.classList.toggle('overdue', left <= 0);
    this.countdown.title = `${new Date(deadline).toISOString()}: the later of the deadline the store logged and the last heartbeat this replica took + the lease; the store's clock decides`;
  }

  private timeline(pool: DebugPoolDetail): HTMLElement {
    const rows = [...pool.history].reverse().map((entry, i) => {
      const t = entry.cause.transition ? this.options.transitions.get(entry.cause.transition) : undefined;
      const how = t ? `${t.kind === 'always' ? 'always' : t.label}${entry.cause.guard ? ` [${entry.cause.guard}]` : ''}` : entry.cause.guard ? `[${entry.cause.guard}]` : '';
      return el(
        'tr',
        { 'data-index': i, 'data-from': entry.from, 'data-to': entry.to, 'data-event': entry.event },
        el('td', { class: 'time' }, formatTime(Date.parse(entry.at))),
        el('td', { class: 'event' }, entry.event),
        el('td', { class: 'move' }, el('span', { class: `badge state-${entry.from}` }, entry.from), ' → ', el('span', { class: `badge state-${entry.to}` }, entry.to)),
        el('td', { class: 'cause' }, entry.cause.detail, how ? el('span', { class: 'muted' }, ` · ${how}`) : null),
      );
    });
    return el(
      'table',
      { class: 'timeline' },
      el('thead', {}, el('tr', {}, el('th', {}, 'time'), el('th', {}, 'event'), el('th', {}, 'from → to'), el('th', {}, 'cause'))),
      el('tbody', {}, ...rows),
    );
  }
}

function fact(name: string, value: Node | string): HTMLElement[] {
  return [el('dt', {}, name), el('dd', { 'data-fact': name }, value)];
}

function list(items: string[]): Node | string {
  return items.length === 0 ? el('span', { class: 'muted' }, 'none') : el('ul', { class: 'plain' }, ...items.map((item) => el('li', {}, item)));
}

/** Each live lease with its region, the one whose registration is shown marked. */
function leases(pool: DebugPoolDetail): Node | string {
  if (pool.leases.length === 0) return el('span', { class: 'muted' }, 'none live');
  return el(
    'table',
    { class: 'leases', title: "times on each region's store clock, as last logged: a renewal that changes nothing is not logged" },
    el('thead', {}, el('tr', {}, el('th', {}, 'region'), el('th', {}, 'registration'), el('th', {}, 'version'), el('th', {}, 'content changed'), el('th', {}, 'deadline as logged'))),
    el(
      'tbody',
      {},
      ...pool.leases.map((lease) =>
        el(
          'tr',
          { 'data-lease-region': lease.region, 'data-shown': String(lease.shown), class: lease.shown ? 'shown' : null },
          el('td', { class: 'region-name' }, lease.region),
          el('td', {}, lease.shown ? el('strong', {}, 'shown') : el('span', { class: 'muted' }, 'not shown')),
          el('td', {}, String(lease.version)),
          el('td', { class: 'time' }, formatTime(lease.changed_at_ms)),
          el('td', { class: 'time' }, formatTime(lease.deadline_ms)),
        ),
      ),
    ),
  );
}

function registration(pool: DebugPoolDetail): Node | string {
  const r = pool.registration;
  if (!r) return el('span', { class: 'muted' }, 'none seen');
  const location = [r.location.region, r.location.zone].filter(Boolean).join(' / ');
  const from = pool.leases.find((lease) => lease.shown && lease.region !== '');
  return el(
    'div',
    {},
    el('div', {}, el('strong', {}, r.model), from ? el('span', { class: 'muted', 'data-shown-from': from.region }, ` · from region ${from.region}`) : null),
    el('div', { class: 'muted' }, `capabilities: ${r.capabilities.join(', ') || 'none'}`),
    el('div', { class: 'muted' }, `capacity: ${r.capacity.map((c) => `${c.name}=${c.value}`).join(', ') || 'none'}`),
    location ? el('div', { class: 'muted' }, `location: ${location}`) : null,
  );
}
