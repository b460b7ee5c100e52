// Every Redis key the store uses, built here and nowhere else. All of them share one hash tag,
// `{<prefix>}`, so they live in one slot: each script touches only keys of that slot and stays atomic
// on a Redis Cluster too. Scripts never build keys themselves; they get these through KEYS.
import type { PoolKey } from '../../contract/index.js';

export interface StoreKeys {
  /** Sorted set: member = pool key, score = deadline (ms, Redis TIME). */
  readonly deadlines: string;
  /** Stream: the change log of `upsert` and `lapse` entries. */
  readonly changes: string;
  /** String: the store's epoch, created once per data lifetime (see StoreSnapshot.epoch). */
  readonly epoch: string;
  /** String: the writers' latest stamp (Redis TIME, ms; stamp-5.lua). */
  readonly stamp: string;
  /** Sorted set: the outages the writers lived through, score = end, member = "start:end:window:covered" (stamp-5.lua). */
  readonly outages: string;
  /**
   * The deadlines of every kind of lease in this Redis, pools' then routers': an outage's one record
   * (stamp-5.lua) counts the leases of both, whichever kind's writer records it.
   */
  readonly leaseDeadlines: readonly [pools: string, routers: string];
  /**
   * Sorted set: leases (member = the pool's or router's hash key, score = deadline) renewed after their
   * deadline passed while the stamp was stale, before any writer stamped again: the record of an outage
   * counts them with the leases still due in it (heartbeat-6.lua, stamp-5.lua). Emptied at every stamp.
   */
  readonly gapRenewals: string;
  /** Hash of one pool: registration, renewed_at_ms, lease_ms, version. */
  pool(key: PoolKey): string;
}

/**
 * What a store's leases are of: pools, or routers (docs/contract.md §10). Router leases live in the same
 * Redis under keys of their own (`router:<id>` hashes, `router-deadlines`, `router-changes`), and share the
 * epoch, the stamp and the outages with the pools: one Redis, one data lifetime, one renewal window.
 */
export type LeaseKind = 'pools' | 'routers';

export function createStoreKeys(prefix: string, kind: LeaseKind = 'pools'): StoreKeys {
  if (prefix === '' || /[{}]/.test(prefix)) {
    // A brace in the prefix would move the hash tag and scatter the keys over several slots.
    throw new RangeError(`redis prefix must be non-empty and hold no "{" or "}", got ${JSON.stringify(prefix)}`);
  }
  const tag = `{${prefix}}`;
  const leaseDeadlines = [`${tag}:deadlines`, `${tag}:router-deadlines`] as const;
  const gapRenewals = `${tag}:gap-renewals`;
  if (kind === 'routers') {
    return {
      deadlines: leaseDeadlines[1],
      changes: `${tag}:router-changes`,
      epoch: `${tag}:epoch`,
      stamp: `${tag}:stamp`,
      outages: `${tag}:outages`,
      leaseDeadlines,
      gapRenewals,
      pool: (key) => `${tag}:router:${escapeKeyPart(key)}`,
    };
  }
  return {
    deadlines: leaseDeadlines[0],
    changes: `${tag}:changes`,
    epoch: `${tag}:epoch`,
    stamp: `${tag}:stamp`,
    outages: `${tag}:outages`,
    leaseDeadlines,
    gapRenewals,
    pool: (key) => `${tag}:pool:${escapeKeyPart(key)}`,
  };
}

const RESERVED_RUN = /[^A-Za-z0-9._-]+/g;
const DNS_POOL_KEY = /^[A-Za-z0-9._/-]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Percent-encodes every UTF-8 byte outside [A-Za-z0-9._-], so no pool key can carry a `{`, `}` or `:` into
 * a Redis key (moving the hash tag or mimicking another key) and every key maps to exactly one Redis key.
 * Keys that are not well-formed UTF-16 (lone surrogates) are refused: UTF-8 cannot carry them, so two of
 * them could otherwise collapse into one Redis key.
 */
export function escapeKeyPart(part: string): string {
  // A pool key of DNS-1123 names (every valid registration's) holds no other reserved character than '/'.
  if (DNS_POOL_KEY.test(part)) return part.replaceAll('/', '%2F');
  if (LONE_SURROGATE.test(part)) throw new RangeError(`pool key is not well-formed Unicode: ${JSON.stringify(part)}`);
  // One pass over the runs that need encoding (a heartbeat's key is mostly unreserved characters).
  return part.replace(RESERVED_RUN, (run) => {
    let escaped = '';
    for (const byte of encoder.encode(run)) escaped += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    return escaped;
  });
}

/** The inverse of escapeKeyPart (for tools reading the keyspace); refuses malformed input. */
export function unescapeKeyPart(escaped: string): string {
  if (!/^(?:[A-Za-z0-9._-]|%[0-9A-F]{2})*$/.test(escaped)) {
    throw new RangeError(`not an escaped key part: ${JSON.stringify(escaped)}`);
  }
  const bytes: number[] = [];
  for (let i = 0; i < escaped.length; ) {
    if (escaped[i] === '%') {
      bytes.push(Number.parseInt(escaped.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      bytes.push(escaped.charCodeAt(i));
      i += 1;
    }
  }
  try {
    return strictDecoder.decode(new Uint8Array(bytes));
  } catch {
    throw new RangeError(`escaped key part is not UTF-8: ${JSON.stringify(escaped)}`);
  }
}
