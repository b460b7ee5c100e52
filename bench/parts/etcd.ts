// 3b. etcd as a peer, measured the way the lapse and convergence parts measure poolscope: a lease's
// expiry → the DELETE on a watcher (leases granted and keys put staggered, never kept alive), and a put →
// its event on a watcher (one at a time). etcd is started privately by the part; when no etcd is on the
// PATH the part is skipped and says how to add it. BENCHMARKS.md sets these beside poolscope's figures.
import { ETCD_MISSING, etcdVersion, grantLease, put, startPrivateEtcd, watchPrefix } from '../lib/etcd.js';
import { round, roundAll, summarize } from '../lib/stats.js';
import { informational } from '../report/types.js';
import type { BenchPart } from './part.js';

/** The TTL asked for: the lapse part's lease; etcd grants at least its minimum (2 s with its defaults). */
const TTL_SECS = 1;
const WARMUP = 20;
/** How long after the last expected expiry missing deletes are given up on. */
const GRACE_MS = 5000;
const EVENT_TIMEOUT_MS = 5000;

export const etcdPart: BenchPart = {
  name: 'etcd',
  async run({ sizes, logger }) {
    const { leases, staggerMs, puts } = sizes.etcd;
    const version = etcdVersion();
    const title = 'etcd as a peer (lease expiry → DELETE, put → watch event)';
    if (version === undefined) {
      logger.warn(ETCD_MISSING);
      return { part: 'etcd', title, method: '', figures: [], details: {}, skipped: ETCD_MISSING };
    }
    const etcd = await startPrivateEtcd();
    try {
      logger.info({ leases, staggerMs }, 'etcd: staggered leases, never kept alive');
      const expiry = await measureExpiry(etcd.url, leases, staggerMs);
      logger.info({ puts }, 'etcd: put → watch event');
      const putWatch = await measurePutWatch(etcd.url, puts);
      const lateness = expiry.latency;
      return {
        part: 'etcd',
        title,
        method:
          `${version}, one member started by the part (its defaults: heartbeat 100 ms, election timeout 1 s, the WAL ` +
          `fsynced on every write, data in a temporary folder), driven through its v3 HTTP/JSON gateway (gRPC behind ` +
          `it) by the same Node fetch as the poolscope parts. Expiry: ${leases} leases granted one every ${staggerMs} ms, ` +
          `each asked for ${TTL_SECS} s and granted ${expiry.grantedTtlSecs.join(' or ')} s (etcd's minimum TTL), a key put ` +
          `with each, never kept alive; each DELETE timed on a watch of the prefix from (just before the grant) + the ` +
          `granted TTL, an upper bound like the lapse part's. The leader looks for expired leases every 500 ms, so ` +
          `lateness up to about 500 ms is etcd's design, not load. Put → event: ${puts} puts one after another ` +
          `(after ${WARMUP} unmeasured), each timed from just before the put to its event on the watch stream.`,
        figures: [
          informational({ id: 'etcd.lapse_max', label: 'lease expiry → DELETE on a watcher, max', value: missingOr(expiry.missing, lateness.max), unit: 'ms' }),
          informational({ id: 'etcd.lapse_p99', label: 'lease expiry → DELETE on a watcher, p99', value: lateness.p99, unit: 'ms' }),
          informational({ id: 'etcd.lapse_p50', label: 'lease expiry → DELETE on a watcher, p50', value: lateness.p50, unit: 'ms' }),
          informational({ id: 'etcd.put_watch_p99', label: 'put → event on a watcher, p99', value: putWatch.latency.p99, unit: 'ms' }),
          informational({ id: 'etcd.put_watch_p50', label: 'put → event on a watcher, p50', value: putWatch.latency.p50, unit: 'ms' }),
          informational({ id: 'etcd.put_watch_max', label: 'put → event on a watcher, max', value: putWatch.latency.max, unit: 'ms' }),
          informational({ id: 'etcd.put_p99', label: 'the put alone (round trip), p99', value: putWatch.put.p99, unit: 'ms' }),
          informational({ id: 'etcd.min_ttl', label: 'lease TTL granted for 1 s asked', value: Math.min(...expiry.grantedTtlSecs) * 1000, unit: 'ms' }),
        ],
        details: {
          version,
          expiryLatenessMs: roundAll(lateness),
          missingDeletes: expiry.missing,
          grantAndPutRoundTripMs: roundAll(expiry.setup),
          grantedTtlSecs: expiry.grantedTtlSecs,
          putToEventMs: roundAll(putWatch.latency),
          putRoundTripMs: roundAll(putWatch.put),
          measuredMs: round(expiry.ms + putWatch.ms),
        },
      };
    } finally {
      await etcd.stop();
    }
  },
};

/** A delete that never came is a miss, not a figure to leave out. */
function missingOr(missing: number, value: number): number {
  return missing > 0 ? Number.POSITIVE_INFINITY : value;
}

async function measureExpiry(url: string, leases: number, staggerMs: number) {
  const started = performance.now();
  const deadlines = new Map<string, number>();
  const deletedAt = new Map<string, number>();
  const setup: number[] = [];
  const granted = new Set<number>();
  const watch = await watchPrefix(url, 'lapse/', (event) => {
    if (event.type === 'DELETE' && !deletedAt.has(event.key)) deletedAt.set(event.key, event.at);
  });
  try {
    for (let i = 0; i < leases; i += 1) {
      // On a fixed schedule, not after each reply, so a slow grant does not bunch the rest.
      const wait = started + i * staggerMs - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const key = `lapse/${i}`;
      const before = performance.now();
      const lease = await grantLease(url, TTL_SECS);
      deadlines.set(key, before + lease.ttlSecs * 1000);
      granted.add(lease.ttlSecs);
      await put(url, key, 'pool', lease.id);
      setup.push(performance.now() - before);
    }
    const last = Math.max(...deadlines.values());
    while (deletedAt.size < leases && performance.now() < last + GRACE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    watch.close();
  }
  const samples = [...deadlines].flatMap(([key, deadline]) => {
    const at = deletedAt.get(key);
    return at === undefined ? [] : [at - deadline];
  });
  return {
    latency: summarize(samples),
    missing: leases - samples.length,
    setup: summarize(setup),
    grantedTtlSecs: [...granted].sort((a, b) => a - b),
    ms: performance.now() - started,
  };
}

async function measurePutWatch(url: string, puts: number) {
  const started = performance.now();
  const waiting = new Map<string, (at: number) => void>();
  const watch = await watchPrefix(url, 'conv/', (event) => {
    if (event.type === 'PUT') waiting.get(event.key)?.(event.at);
  });
  const samples: number[] = [];
  const putMs: number[] = [];
  try {
    for (let i = 0; i < WARMUP + puts; i += 1) {
      const key = `conv/${i}`;
      const arrived = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no watch event for ${key} within ${EVENT_TIMEOUT_MS} ms`)), EVENT_TIMEOUT_MS);
        waiting.set(key, (at) => {
          clearTimeout(timer);
          waiting.delete(key);
          resolve(at);
        });
      });
      const before = performance.now();
      await put(url, key, `registration ${i}`);
      const posted = performance.now();
      const at = await arrived;
      if (i >= WARMUP) {
        samples.push(at - before);
        putMs.push(posted - before);
      }
    }
  } finally {
    watch.close();
  }
  return { latency: summarize(samples), put: summarize(putMs), ms: performance.now() - started };
}
