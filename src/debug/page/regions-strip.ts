// The regions strip (docs/contract.md §7): how this replica reads every region's store, live: reading,
// not read yet, refilling, unreachable since T with its pools held, or dropped; the home region marked.
// Hidden without regions. How long a region has been unreachable ticks with the page's clock.
import type { DebugRegion } from '../types.js';
import { el, formatDuration, formatTime } from './dom.js';

export interface RegionsStripOptions {
  container: HTMLElement;
  /** The server's clock now (ms). */
  serverNow: () => number;
}

export class RegionsStrip {
  private regions: DebugRegion[] = [];
  private readonly durations: { element: HTMLElement; sinceMs: number }[] = [];

  constructor(private readonly options: RegionsStripOptions) {}

  /** null: no regions configured (the strip is hidden). */
  show(regions: DebugRegion[] | null): void {
    const { container } = this.options;
    container.hidden = regions === null;
    document.body.dataset.regions = regions === null ? 'none' : String(regions.length);
    this.regions = regions ?? [];
    this.durations.length = 0;
    container.replaceChildren(el('span', { class: 'strip-title' }, 'Regions'), ...this.regions.map((region) => this.chip(region)));
    this.tick();
  }

  /** Refresh the "for 12.3 s" of unreachable regions. */
  tick(): void {
    const now = this.options.serverNow();
    for (const { element, sinceMs } of this.durations) element.textContent = formatDuration(now - sinceMs);
  }

  private chip(region: DebugRegion): HTMLElement {
    return el(
      'div',
      {
        class: `region status-${region.status}${region.home ? ' home' : ''}`,
        'data-region': region.name,
        'data-status': region.status,
        'data-home': String(region.home),
        title: region.reason ?? 'read in full, its change log followed',
      },
      el('span', { class: 'dot' }),
      el('strong', {}, region.name),
      region.home ? el('span', { class: 'home-mark', title: 'this replica writes heartbeats here' }, 'home') : null,
      el('span', { class: 'status-text' }, ...this.describe(region)),
      this.outage(region),
    );
  }

  /** The last outage of the region's store and its renewal window (docs/contract.md §9), once there was one. */
  private outage(region: DebugRegion): HTMLElement | null {
    if (region.last_outage_ended_ms === null) return null;
    const window = region.renewal_window_open ? ' · renewal window open' : '';
    return el(
      'span',
      { class: 'outage', 'data-window-open': String(region.renewal_window_open) },
      ` · store outage ended ${formatTime(region.last_outage_ended_ms)}${window}`,
    );
  }

  private describe(region: DebugRegion): (Node | string)[] {
    switch (region.status) {
      case 'reading':
        return ['reading'];
      case 'starting':
        return ['not read yet'];
      case 'refilling':
        return [`refilling until ${region.refill_until_ms === null ? '?' : formatTime(region.refill_until_ms)}`];
      case 'unreachable':
      case 'dropped': {
        const since = region.unreachable_since_ms;
        const parts: (Node | string)[] = [since === null ? 'unreachable' : `unreachable since ${formatTime(since)} (`];
        if (since !== null) {
          const duration = el('span', { class: 'duration' });
          this.durations.push({ element: duration, sinceMs: since });
          parts.push(duration, ')');
        }
        // The home region is never dropped: the replica holds its whole view and refuses heartbeats.
        const held = region.home ? 'view held, POST /pools answers 503' : 'pools held';
        parts.push(' · ', el('span', { class: 'held' }, region.status === 'dropped' ? 'dropped: its pools left' : held));
        return parts;
      }
    }
  }
}
