// The metrics of the limits (docs/contract.md §8, docs/operations.md "Metrics"): watch streams open, cut
// and refused, and connections refused, moved by hooks the HTTP layer calls.
import { Counter, Gauge, type Registry } from 'prom-client';

export type WatchDropReason = 'backlog';
export type ConnectionRefusedReason = 'max_connections' | 'emfile';

/** What the watch fan-out tells when scraped. */
export interface WatchStats {
  /** Open GET /pools/watch streams. */
  readonly size: number;
  /** Bytes written to them that their clients have not taken yet, summed. */
  readonly backlogBytes: number;
}

export class LimitMetrics {
  /** The watch fan-out, once the app is built. */
  watchers: WatchStats | undefined;
  private readonly watchDrops: Counter<'reason'>;
  private readonly watchRefusals: Counter;
  private readonly connectionRefusals: Counter<'reason'>;

  constructor(registers: Registry[]) {
    const limits = this;
    new Gauge({
      name: 'poolscope_watch_backlog_bytes',
      help: 'Bytes written to GET /pools/watch streams that their clients have not taken yet, summed over the streams.',
      registers,
      collect() {
        this.set(limits.watchers?.backlogBytes ?? 0);
      },
    });
    this.watchDrops = new Counter({
      name: 'poolscope_watch_dropped_total',
      help: 'Watch streams cut by this replica, by reason (backlog: more unsent bytes than --watch-max-backlog-bytes).',
      labelNames: ['reason'],
      registers,
    });
    this.watchDrops.inc({ reason: 'backlog' }, 0);
    this.watchRefusals = new Counter({
      name: 'poolscope_watch_refused_total',
      help: 'GET /pools/watch requests answered 503 too_many_watchers (--max-watchers).',
      registers,
    });
    this.connectionRefusals = new Counter({
      name: 'poolscope_connections_refused_total',
      help: 'Connections closed as they came, by reason (max_connections: --max-connections reached; emfile: out of file descriptors).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['max_connections', 'emfile'] as const) this.connectionRefusals.inc({ reason }, 0);
  }

  readonly observeWatchers = (stats: WatchStats): void => {
    this.watchers = stats;
  };

  readonly countWatchDrop = (reason: WatchDropReason): void => {
    this.watchDrops.inc({ reason });
  };

  readonly countWatchRefused = (): void => {
    this.watchRefusals.inc();
  };

  readonly countConnectionRefused = (reason: ConnectionRefusedReason, count = 1): void => {
    this.connectionRefusals.inc({ reason }, count);
  };
}
