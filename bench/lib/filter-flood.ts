// A flood of distinct GET /pools filters (docs/contract.md §8, "caches that cannot be thrashed"): `filters`
// requests of `?model=` values no pool has, `concurrency` at a time, while /healthz is asked every 10 ms on
// a connection of its own; and a plain GET /pools before and after, whose ETag must not change and whose
// answer must not cost a serialization again.
import { rawGet } from './http.js';
import { round, summarize, type LatencySummary } from './stats.js';

export interface FilterFloodResult {
  filters: number;
  floodMs: number;
  /** /healthz round trips during the flood. */
  healthz: LatencySummary;
  /** Statuses other than 200 among the filtered answers. */
  failedFilters: number;
  plainBefore: { etag: string | undefined; ms: number };
  plainAfter: { etag: string | undefined; ms: number };
}

export async function floodFilters(url: string, options: { filters: number; concurrency: number }): Promise<FilterFloodResult> {
  const plain = async () => {
    const reply = await rawGet(`${url}/pools`, { 'accept-encoding': 'identity' });
    const etag = reply.headers.etag;
    return { etag: typeof etag === 'string' ? etag : undefined, ms: round(reply.ms) };
  };
  // Twice: the first one may be the one that serializes this revision.
  await plain();
  const plainBefore = await plain();
  let flooding = true;
  const healthz: number[] = [];
  const probe = (async () => {
    while (flooding) {
      healthz.push((await rawGet(`${url}/healthz`, {})).ms);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const started = performance.now();
  let next = 0;
  let failedFilters = 0;
  const worker = async () => {
    while (next < options.filters) {
      const i = next++;
      const reply = await rawGet(`${url}/pools?model=${encodeURIComponent(`flood-${i}-${Math.random().toString(36).slice(2)}`)}`, {
        'accept-encoding': 'identity',
      });
      if (reply.status !== 200) failedFilters += 1;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const floodMs = performance.now() - started;
  flooding = false;
  await probe;
  const plainAfter = await plain();
  return { filters: options.filters, floodMs: round(floodMs), healthz: summarize(healthz), failedFilters, plainBefore, plainAfter };
}
