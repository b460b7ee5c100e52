// 4b. 100,000 pools: a new replica against a Redis already holding 100,000 live leases (written with the
// store's own heartbeat script, not 100,000 POSTs), timed from its spawn to its first complete GET /pools,
// and its RSS then; on that replica, what GET /pools costs on the wire with Accept-Encoding (identity,
// gzip, br) and If-None-Match, and what a watch stream that reconnects with Last-Event-ID receives
// (docs/contract.md §5), and what a flood of 1,000 distinct `?model=` filters does to /healthz and to the
// plain list's cached body (§8). Targets: complete ≤ 3 s, RSS ≤ 512 MiB, compressed ≤ 1/4 of the bytes,
// 304 while the revision is unchanged, a resumed stream with only the events since, /healthz p99 ≤ 50 ms
// during the flood with the plain body still cached after it.
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { randomPrefix, startPrivateRedis } from '../../test/support/redis-server.js';
import { writeLeases } from '../lib/bulk-leases.js';
import { measureChangeStall } from '../lib/change-stall.js';
import { gcShown } from '../lib/loop-delay.js';
import { floodFilters } from '../lib/filter-flood.js';
import { postAll, postPool, rawGet, type RawResponse } from '../lib/http.js';
import type { RunningReplica } from '../lib/new-replica.js';
import { rssBytes } from '../lib/cpu.js';
import { benchRegistration } from '../lib/replicas.js';
import { round } from '../lib/stats.js';
import { TimedSse, type TimedEvent } from '../lib/timed-sse.js';
import { checked, informational, judged, type Figure } from '../report/types.js';
import type { BenchPart } from './part.js';
import { newReplicaFigure, spawnNewReplica } from './scale.js';

/** The leases outlive the part by far (a new replica lists them all; nothing lapses meanwhile). */
const LEASE_SECS = 600;
const RSS_TARGET_MIB = 350;
const COMPLETE_TARGET_MS = 3000;
/** How long a changed revision may take to reach GET /pools (the replica follows the store's log). */
const CHANGE_TIMEOUT_MS = 10_000;
const MiB = 2 ** 20;
/** Distinct `?model=` values of the flood, and how many are asked at once. */
const FLOOD_FILTERS = 1000;
const FLOOD_CONCURRENCY = 8;
const HEALTHZ_P99_TARGET_MS = 50;
/** Watch streams open, and changes made, while the loop delay is read. */
const STALL_WATCHERS = 1000;
const STALL_CHANGES = 5;
const STALL_MAX_TARGET_MS = 50;

export const scale100kPart: BenchPart = {
  name: 'scale100k',
  async run({ sizes, logger }) {
    const { pools, changes } = sizes.scale100k;
    const redis = await startPrivateRedis();
    const prefix = randomPrefix('bench-100k');
    try {
      logger.info({ pools }, 'scale100k: writing leases with the store heartbeat script');
      const written = await writeLeases({
        redisUrl: redis.url,
        prefix,
        leaseSecs: LEASE_SECS,
        registrations: Array.from({ length: pools }, (_, i) => benchRegistration('big', i)),
      });
      logger.info({ ms: Math.round(written.ms) }, 'scale100k: a new replica against them');
      const fresh = await spawnNewReplica({
        redisUrl: redis.url,
        prefix,
        pools,
        timeoutMs: 120_000,
        whileComplete: async (replica) => {
          logger.info('scale100k: GET /pools with Accept-Encoding and If-None-Match');
          const encodings = await measureEncodings(replica);
          logger.info({ filters: FLOOD_FILTERS }, 'scale100k: distinct ?model= filters while /healthz is asked');
          const flood = await floodFilters(replica.url, { filters: FLOOD_FILTERS, concurrency: FLOOD_CONCURRENCY });
          const conditional = await measureConditional(replica, encodings.identity);
          logger.info({ changes }, 'scale100k: a watch stream reconnecting with Last-Event-ID');
          const resume = await measureResume(replica, changes);
          logger.info({ watchers: STALL_WATCHERS, changes: STALL_CHANGES }, 'scale100k: event-loop delay while changes are served to GETs and watchers');
          const stall = await measureChangeStall(replica, { watchers: STALL_WATCHERS, changes: STALL_CHANGES });
          return { encodings, flood, conditional, resume, stall, rssAfterBytes: rssBytes(replica.pid) };
        },
      });
      const after = fresh.whileComplete!;
      const { encodings, flood, conditional, resume, stall } = after;
      const identityBytes = encodings.identity.body.length;
      const identityRef = { label: 'identity', value: identityBytes / 1024, unit: 'KiB' };
      const rssMiB = fresh.rssBytes / MiB;
      const figures: Figure[] = [
        { ...newReplicaFigure('scale100k', fresh, COMPLETE_TARGET_MS) },
        judged({
          id: 'scale100k.rss',
          label: 'new replica: RSS once complete',
          value: rssMiB,
          unit: 'MiB',
          reference: { label: 'target', value: RSS_TARGET_MIB, unit: 'MiB' },
          comparison: 'at-most',
          threshold: 1,
          targetText: `≤ ${RSS_TARGET_MIB} MiB (process included)`,
        }),
        ...(['gzip', 'br'] as const).map((encoding) => {
          const reply = encodings[encoding];
          return judged({
            id: `scale100k.${encoding}_bytes`,
            label: `GET /pools bytes, Accept-Encoding: ${encoding} (answered ${reply.encoding})`,
            value: reply.bytes / 1024,
            unit: 'KiB',
            reference: identityRef,
            comparison: 'at-most',
            threshold: 0.25,
            targetText: '≤ 1/4 of identity',
          });
        }),
        checked({
          id: 'scale100k.if_none_match',
          label: 'GET /pools with If-None-Match: its ETag, revision unchanged',
          value: conditional.unchanged?.status ?? Number.NaN,
          unit: '',
          shown: conditionalShown(conditional),
          targetText: '304 while the revision is unchanged, 200 after a change',
          met: conditional.unchanged?.status === 304 && conditional.unchanged.bytes === 0 && conditional.afterChange?.status === 200,
        }),
        checked({
          id: 'scale100k.resume',
          label: `watch reconnect with Last-Event-ID after ${changes} changes: bytes until caught up`,
          value: resume.bytes / 1024,
          unit: 'KiB',
          shown: resumeShown(resume),
          reference: { label: 'full resync', value: resume.resyncBytes / 1024, unit: 'KiB' },
          targetText: 'only the events since, no resync',
          met: !resume.resynced && resume.events === changes && resume.caughtUp,
        }),
        judged({
          id: 'scale100k.filter_flood_healthz_p99',
          label: `GET /healthz p99 during ${FLOOD_FILTERS.toLocaleString('en-US')} distinct ?model= filters`,
          value: flood.healthz.p99,
          unit: 'ms',
          reference: { label: 'target', value: HEALTHZ_P99_TARGET_MS, unit: 'ms' },
          comparison: 'at-most',
          threshold: 1,
          targetText: `≤ ${HEALTHZ_P99_TARGET_MS} ms`,
        }),
        checked({
          id: 'scale100k.filter_flood_plain_cached',
          label: 'GET /pools after the filter flood: the same body, still cached',
          value: flood.plainAfter.ms,
          unit: 'ms',
          shown: `${flood.plainAfter.etag === flood.plainBefore.etag ? 'same ETag' : 'ETag changed'}, ${flood.plainAfter.ms} ms (before the flood ${flood.plainBefore.ms} ms)`,
          reference: { label: 'before the flood', value: flood.plainBefore.ms, unit: 'ms' },
          targetText: 'same ETag, no slower than twice the cached answer before the flood',
          met: flood.plainAfter.etag !== undefined && flood.plainAfter.etag === flood.plainBefore.etag && flood.plainAfter.ms <= 2 * flood.plainBefore.ms + 5 && flood.failedFilters === 0,
        }),
        judged({
          id: 'scale100k.change_loop_delay_max',
          label: `event-loop delay, max, while ${STALL_CHANGES} changes are served to GET /pools and ${stall.watchers.toLocaleString('en-US')} watchers`,
          value: stall.delay.max,
          unit: 'ms',
          reference: { label: 'target', value: STALL_MAX_TARGET_MS, unit: 'ms' },
          comparison: 'at-most',
          threshold: 1,
          targetText: `≤ ${STALL_MAX_TARGET_MS} ms`,
        }),
        informational({ id: 'scale100k.change_loop_delay_p99', label: 'event-loop delay p99 over that window', value: stall.delay.p99, unit: 'ms' }),
        informational({ id: 'scale100k.change_gc_max', label: `longest garbage-collection pause over that window (${gcShown(stall.delay)})`, value: stall.delay.gc.max, unit: 'ms' }),
        informational({ id: 'scale100k.filter_flood_ms', label: `${FLOOD_FILTERS.toLocaleString('en-US')} distinct ?model= filters, ${FLOOD_CONCURRENCY} at a time`, value: flood.floodMs, unit: 'ms' }),
        informational({ id: 'scale100k.new_replica_listening', label: 'new replica: spawn → listening', value: fresh.listeningMs, unit: 'ms' }),
        informational({ id: 'scale100k.rss_per_pool', label: 'new replica: RSS once complete, per pool', value: fresh.rssBytes / pools / 1024, unit: 'KiB' }),
        informational({ id: 'scale100k.rss_after', label: 'RSS after the requests and streams below', value: after.rssAfterBytes / MiB, unit: 'MiB' }),
        informational({ id: 'scale100k.identity_ms', label: 'GET /pools identity, round trip', value: encodings.identity.ms, unit: 'ms' }),
        ...(['gzip', 'br'] as const).flatMap((encoding) => [
          informational({
            id: `scale100k.${encoding}_first_ms`,
            label: `GET /pools ${encoding}, first request of the revision`,
            value: encodings[encoding].firstMs,
            unit: 'ms',
          }),
          informational({
            id: `scale100k.${encoding}_again_ms`,
            label: `GET /pools ${encoding}, again (same revision)`,
            value: encodings[encoding].ms,
            unit: 'ms',
            reference: { label: 'first', value: encodings[encoding].firstMs, unit: 'ms' },
          }),
        ]),
      ];
      return {
        part: 'scale100k',
        title: `${pools.toLocaleString('en-US')} pools`,
        method:
          `${pools} live leases (${LEASE_SECS} s) written to a private Redis by the store's own heartbeat (heartbeat-6.lua ` +
          `through the Redis store, batches of 2,000 on one pipelined connection: ${round(written.ms / 1000, 1)} s), then a ` +
          `new replica (the binary) spawned against them and GET /pools polled every 5 ms (identity; an incomplete answer ` +
          `is dropped after its first bytes) until it answers complete with every pool, received in full; its VmRSS at ` +
          `that moment. On that replica: GET /pools through node:http (nothing decompressed for us) with Accept-Encoding ` +
          `identity, gzip and br, each compressed one twice (bytes on the wire, the first and the second time); a request ` +
          `with If-None-Match set to the ETag it answered, then again after a POST changed the revision. Before that, ` +
          `${FLOOD_FILTERS} GET /pools?model=<a value no pool has, new each time>, ${FLOOD_CONCURRENCY} at a time, while ` +
          `GET /healthz is asked every 10 ms on a connection of its own (its round trips summarized), and a plain ` +
          `GET /pools (identity) before and after it (same ETag, answered from the cache). Last, a watch ` +
          `stream read to its first resync and dropped; ${changes} POSTs of new pools (a second stream confirms each ` +
          `arrived); the stream reopened with Last-Event-ID set to the first resync's id and read until it holds every ` +
          `one of the ${changes} upserts, or a resync. Then ${STALL_WATCHERS} watch streams resumed at the current revision ` +
          `(no resync sent), 4 clients asking GET /pools over and over (2 identity, 2 gzip, bodies read and dropped), and ` +
          `${STALL_CHANGES} new pools POSTed 0.4 s apart, each waited for on every stream; the replica's event-loop delay over ` +
          `that window: a 1 ms timer preloaded into it (bench/probes/loop-delay-hook.mjs), how late each run came.`,
        figures,
        details: {
          pools,
          leaseWriteMs: round(written.ms),
          newReplica: { ...fresh, whileComplete: undefined },
          encodings: Object.fromEntries(
            Object.entries(encodings).map(([name, reply]) => [name, { ...reply, body: undefined }]),
          ),
          flood,
          conditional,
          resume,
          stall,
          rssAfterBytes: after.rssAfterBytes,
        },
      };
    } finally {
      await redis.stop();
    }
  },
};

interface EncodedReply {
  status: number;
  /** Content-Encoding of the reply ('identity' when none). */
  encoding: string;
  etag: string | undefined;
  /** Body bytes on the wire. */
  bytes: number;
  /** The body decoded, as long as identity's (a check that the compressed body is the same list). */
  decodedBytes: number;
  ms: number;
  /** The first request of this encoding (where a replica that caches per revision compresses). */
  firstMs: number;
  body: Buffer;
}

async function measureEncodings(replica: RunningReplica) {
  const get = async (acceptEncoding: string): Promise<EncodedReply> => {
    const first = await rawGet(`${replica.url}/pools`, { 'accept-encoding': acceptEncoding });
    const reply = acceptEncoding === 'identity' ? first : await rawGet(`${replica.url}/pools`, { 'accept-encoding': acceptEncoding });
    return describe(reply, first.ms);
  };
  const identity = await get('identity');
  const gzip = await get('gzip');
  const br = await get('br');
  return { identity, gzip, br };
}

function describe(reply: RawResponse, firstMs: number): EncodedReply {
  const encoding = String(reply.headers['content-encoding'] ?? 'identity');
  const decoded = encoding === 'gzip' ? gunzipSync(reply.body) : encoding === 'br' ? brotliDecompressSync(reply.body) : reply.body;
  const etag = reply.headers.etag;
  return {
    status: reply.status,
    encoding,
    etag: typeof etag === 'string' ? etag : undefined,
    bytes: reply.body.length,
    decodedBytes: decoded.length,
    ms: round(reply.ms),
    firstMs: round(firstMs),
    body: reply.body,
  };
}

interface ConditionalResult {
  etag: string | undefined;
  unchanged?: { status: number; bytes: number; ms: number };
  afterChange?: { status: number; bytes: number; etag: string | undefined; ms: number };
}

/** If-None-Match with the ETag GET /pools answered: before and after a POST changes the revision. */
async function measureConditional(replica: RunningReplica, identity: EncodedReply): Promise<ConditionalResult> {
  const etag = identity.etag;
  if (etag === undefined) return { etag };
  const ask = () => rawGet(`${replica.url}/pools`, { 'accept-encoding': 'identity', 'if-none-match': etag });
  const unchanged = await ask();
  await postPool(replica.url, JSON.stringify(benchRegistration('etag-change', 0)));
  // The POST is stored at once; the listed view follows the store's log, so the new revision shows shortly after.
  const deadline = performance.now() + CHANGE_TIMEOUT_MS;
  let afterChange = await ask();
  while (afterChange.status === 304 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    afterChange = await ask();
  }
  const newEtag = afterChange.headers.etag;
  return {
    etag,
    unchanged: { status: unchanged.status, bytes: unchanged.body.length, ms: round(unchanged.ms) },
    afterChange: {
      status: afterChange.status,
      bytes: afterChange.body.length,
      etag: typeof newEtag === 'string' ? newEtag : undefined,
      ms: round(afterChange.ms),
    },
  };
}

function conditionalShown(result: ConditionalResult): string {
  if (result.etag === undefined) return 'no ETag (not supported)';
  const unchanged = `${result.unchanged!.status}, ${result.unchanged!.bytes.toLocaleString('en-US')} bytes`;
  return `${unchanged}; after a change ${result.afterChange!.status}`;
}

interface ResumeResult {
  changes: number;
  /** The id of the first stream's resync, sent back as Last-Event-ID. */
  lastEventId: string | undefined;
  /** Bytes of that first stream up to the end of its resync: what a full resync costs. */
  resyncBytes: number;
  /** Whether the reconnected stream sent a resync (not resumed). */
  resynced: boolean;
  /** Events the reconnected stream sent until it had every change (a resync counts as one). */
  events: number;
  eventKinds: Record<string, number>;
  /** Bytes the reconnected stream carried until then. */
  bytes: number;
  caughtUp: boolean;
  /** From reconnecting to caught up. */
  ms: number;
}

async function measureResume(replica: RunningReplica, changes: number): Promise<ResumeResult> {
  const watchUrl = `${replica.url}/pools/watch`;
  const isResync = (event: TimedEvent) => event.event === 'resync';
  const away = await TimedSse.open(watchUrl, { 'accept-encoding': 'identity' });
  let first: TimedEvent;
  try {
    first = await away.next(isResync, 60_000);
  } finally {
    away.close();
  }
  const names = Array.from({ length: changes }, (_, i) => `resume-${i}`);
  const pending = new Set(names);
  const witness = await TimedSse.open(watchUrl, { 'accept-encoding': 'identity' });
  try {
    await witness.next(isResync, 60_000);
    const allSeen = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the changes did not all reach a watch stream: ${pending.size} missing`)), 60_000);
      if (pending.size === 0) resolve();
      witness.subscribe((event) => {
        if (event.event !== 'upsert') return;
        pending.delete((event.data as { pool: { name: string } }).pool.name);
        if (pending.size === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    await postAll(replica.url, names.map((name, i) => JSON.stringify(benchRegistration('resume', i, { name }))), 8);
    await allSeen;
  } finally {
    witness.close();
  }

  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (first.id !== undefined) headers['last-event-id'] = first.id;
  const started = performance.now();
  const back = await TimedSse.open(watchUrl, headers);
  try {
    const missing = new Set(names);
    const eventKinds: Record<string, number> = {};
    let events = 0;
    let resynced = false;
    const caughtUp = await new Promise<TimedEvent | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 60_000);
      back.subscribe((event) => {
        events += 1;
        eventKinds[event.event] = (eventKinds[event.event] ?? 0) + 1;
        // A resync holds the whole list, every change included (the witness saw them all first).
        if (event.event === 'resync') resynced = true;
        if (event.event === 'upsert') missing.delete((event.data as { pool: { name: string } }).pool.name);
        if (resynced || missing.size === 0) {
          clearTimeout(timer);
          resolve(event);
        }
      });
    });
    return {
      changes,
      lastEventId: first.id,
      resyncBytes: first.bytes,
      resynced,
      events,
      eventKinds,
      bytes: caughtUp?.bytes ?? back.bytes,
      caughtUp: caughtUp !== undefined,
      ms: round((caughtUp?.at ?? performance.now()) - started),
    };
  } finally {
    back.close();
  }
}

function resumeShown(result: ResumeResult): string {
  const kib = (bytes: number) => `${(bytes / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} KiB`;
  if (!result.caughtUp) return `not caught up within 60 s (${result.events} events, ${kib(result.bytes)})`;
  if (result.resynced) return `a resync (not resumed): ${kib(result.bytes)}`;
  return `${result.events} events, ${kib(result.bytes)}, no resync`;
}
