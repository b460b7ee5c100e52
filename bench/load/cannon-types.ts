// What the load generator process (cannon.ts) reads and writes.

export interface CannonConfig {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  /** POST bodies, each sent in turn by every connection. */
  bodies?: string[];
  connections: number;
  durationSecs: number;
  warmupSecs?: number;
}

export interface CannonResult {
  requestsPerSec: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Milliseconds (autocannon's histogram resolves 1 ms). */
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  durationSecs: number;
  bytesPerSec: number;
}
