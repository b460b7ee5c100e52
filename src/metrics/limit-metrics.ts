// The metrics of the limits (docs/contract.md §8, docs/operations.md "Metrics"): event streams open, cut
// and refused, by stream (`pools`: GET /pools/watch, `debug`: /debug/pools/watch), and connections refused,
// moved by hooks the HTTP layer calls.
import { Counter, Gauge, type Registry } from 'prom-client';

export type WatchDropReason = 'backlog';
export type ConnectionRefusedReason = 'max_connections' | 'emfile';
/** The event streams under `--max-watchers` and `--watch-max-backlog-bytes`, each counted on its own. */
export const WATCH_STREAMS = ['pools', 'routers', 'debug'] as const;
export type WatchStreamName = (typeof WATCH_STREAMS)[number];

/** What the streams of one kind tell when scraped. */
export interface WatchStats {
  /** Open streams. */
  readonly size: number;
  /** Bytes written to them that their clients have not taken yet, summed. */
  readonly backlogBytes: number;
}

export class LimitMetrics {
  /** The streams of each kind, once the app has built them. */
  readonly watchers = new Map<WatchStreamName, WatchStats>();
  private readonly watchDrops: Counter<'reason' | 'stream'>;
  private readonly watchRefusals: Counter<'stream'>;
  private readonly connectionRefusals: Counter<'reason'>;

  constructor(registers: Registry[]) {
    const limits = this;
    new Gauge({
      name: 'poolscope_watch_backlog_bytes',
      help: 'Bytes written to event streams that their clients have not taken yet, summed over the streams of each kind (stream: pools, debug).',
      labelNames: ['stream'],
      registers,
      collect() {
        for (const stream of WATCH_STREAMS) this.set({ stream }, limits.watchers.get(stream)?.backlogBytes ?? 0);
      },
    });
    this.watchDrops = new Counter({
      name: 'poolscope_watch_dropped_total',
      help: 'Event streams cut by this replica, by reason (backlog: more unsent bytes than --watch-max-backlog-bytes) and stream (pools, debug).',
      labelNames: ['reason', 'stream'],
      registers,
    });
    this.watchRefusals = new Counter({
      name: 'poolscope_watch_refused_total',
      help: 'Event stream requests answered 503 too_many_watchers (--max-watchers streams of that kind open), by stream (pools, debug).',
      labelNames: ['stream'],
      registers,
    });
    for (const stream of WATCH_STREAMS) {
      this.watchDrops.inc({ reason: 'backlog', stream }, 0);
      this.watchRefusals.inc({ stream }, 0);
    }
    this.connectionRefusals = new Counter({
      name: 'poolscope_connections_refused_total',
      help: 'Connections closed as they came, by reason (max_connections: --max-connections reached; emfile: out of file descriptors).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['max_connections', 'emfile'] as const) this.connectionRefusals.inc({ reason }, 0);
  }

  readonly observeWatchers = (stats: WatchStats, stream: WatchStreamName): void => {
    this.watchers.set(stream, stats);
  };

  readonly countWatchDrop = (reason: WatchDropReason, stream: WatchStreamName): void => {
    this.watchDrops.inc({ reason, stream });
  };

  readonly countWatchRefused = (stream: WatchStreamName): void => {
    this.watchRefusals.inc({ stream });
  };

  readonly countConnectionRefused = (reason: ConnectionRefusedReason, count = 1): void => {
    this.connectionRefusals.inc({ reason }, count);
  };
}
