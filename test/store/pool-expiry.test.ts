// Pool hashes that outlive their lease by a backstop (docs/design.md "The store"): each hash expires a day
// after its deadline on Redis's clock, later than any lapse a renewal window allows (docs/contract.md §9),
// while outside outages a lease past its deadline is in no snapshot, is due, and the sweep turns it into
// exactly one `lapse` in the log and removes its hash.
import { Redis } from 'ioredis';
import { silentLogger } from '../support/logs.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis/index.js';
import { REGISTRATION_BACKSTOP_MS } from '../../src/store/redis/store.js';
import { createStoreKeys, type StoreKeys } from '../../src/store/redis/keys.js';
import type { RegistrationStore } from '../../src/store/types.js';
import { randomPrefix, startRedis, type SharedRedis } from '../support/redis-server.js';
import { eventually, keyOf, registration, WatchRecorder } from './contract-support.js';

const SHORT_LEASE_MS = 300;
const LONG_LEASE_MS = 60_000;

let redis: SharedRedis;
let inspector: Redis;
beforeAll(async () => {
  redis = await startRedis();
  inspector = new Redis(redis.url);
});
afterAll(async () => {
  inspector?.disconnect();
  await redis?.stop();
});

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

function openStore(leaseMs: number): { store: RegistrationStore; keys: StoreKeys } {
  const prefix = randomPrefix('expiry');
  const store = createRedisStore({ url: redis.url, prefix, leaseMs, commandTimeoutMs: 1000, logger: silentLogger() });
  opened.push(store);
  return { store, keys: createStoreKeys(prefix) };
}

function follow(store: RegistrationStore, position: string): WatchRecorder {
  const recorder = new WatchRecorder(store, position);
  opened.push({ close: () => recorder.stop() });
  return recorder;
}

async function redisNowMs(): Promise<number> {
  const [seconds, micros] = await inspector.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** The pool's deadline as the deadlines set holds it (null once swept). */
async function deadlineOf(keys: StoreKeys, key: string): Promise<number | null> {
  const score = await inspector.zscore(keys.deadlines, key);
  return score === null ? null : Number(score);
}

const summary = (events: WatchRecorder['events']) =>
  events.map((e) => (e.type === 'lapse' ? `lapse ${e.key} @${e.atMs}` : `upsert ${e.record.key} v${e.record.version}`));

/** Until Redis's clock is past `deadline`. */
function pastDeadline(deadline: number) {
  return eventually(async () => (await redisNowMs()) > deadline, { what: 'the deadline', timeoutMs: SHORT_LEASE_MS + 1000 });
}

describe('pool hashes that outlive their lease by a backstop', () => {
  it('expire a backstop after the lease deadline on Redis clock, moved by every renewal', async () => {
    const { store, keys } = openStore(LONG_LEASE_MS);
    const reg = registration('expiring');
    await store.heartbeat(reg);
    const hash = keys.pool(keyOf(reg));
    const fields = await inspector.hgetall(hash);
    const deadline = Number(fields.renewed_at_ms) + Number(fields.lease_ms);
    expect(Number(fields.lease_ms)).toBe(LONG_LEASE_MS);
    expect(await inspector.pexpiretime(hash)).toBe(deadline + REGISTRATION_BACKSTOP_MS);
    expect(await deadlineOf(keys, keyOf(reg))).toBe(deadline);
    const pttl = await inspector.pttl(hash);
    expect(pttl).toBeGreaterThan(REGISTRATION_BACKSTOP_MS);
    expect(pttl).toBeLessThanOrEqual(deadline - Number(fields.renewed_at_ms) + REGISTRATION_BACKSTOP_MS);

    // A plain renewal moves the expiry with the deadline.
    await eventually(async () => (await redisNowMs()) > Number(fields.renewed_at_ms), { what: 'the clock to move' });
    expect((await store.heartbeat(reg)).changed).toBe(false);
    const renewed = Number(await inspector.hget(hash, 'renewed_at_ms')) + LONG_LEASE_MS;
    expect(renewed).toBeGreaterThan(deadline);
    expect(await inspector.pexpiretime(hash)).toBe(renewed + REGISTRATION_BACKSTOP_MS);
    expect(await deadlineOf(keys, keyOf(reg))).toBe(renewed);
  });

  it('past its deadline is in no snapshot and due; the sweep logs one lapse, dated at the deadline, and removes the hash', async () => {
    const { store, keys } = openStore(SHORT_LEASE_MS);
    const recorder = follow(store, (await store.snapshot()).position);
    const reg = registration('gone');
    await store.heartbeat(reg);
    const deadline = (await deadlineOf(keys, keyOf(reg)))!;
    const hash = keys.pool(keyOf(reg));
    await pastDeadline(deadline);

    // Run out, not swept: its hash still there, still in the deadlines set and due, in no snapshot.
    expect(await inspector.exists(hash)).toBe(1);
    expect(await deadlineOf(keys, keyOf(reg))).toBe(deadline);
    expect(await store.dueLapses()).toEqual([{ key: keyOf(reg), atMs: deadline }]);
    expect((await store.snapshot()).records).toEqual([]);

    expect((await store.sweep()).lapsed).toBe(1);
    expect((await store.sweep()).lapsed).toBe(0);
    expect(await deadlineOf(keys, keyOf(reg))).toBeNull();
    expect(await inspector.exists(hash)).toBe(0);
    expect(await store.dueLapses()).toEqual([]);
    const marker = registration('marker');
    await store.heartbeat(marker);
    const events = await recorder.untilUpsertOf(keyOf(marker));
    expect(summary(events)).toEqual([`upsert ${keyOf(reg)} v1`, `lapse ${keyOf(reg)} @${deadline}`, `upsert ${keyOf(marker)} v1`]);
  });

  it('logs lapse then upsert for a heartbeat that comes after the deadline, unswept', async () => {
    const { store, keys } = openStore(SHORT_LEASE_MS);
    const recorder = follow(store, (await store.snapshot()).position);
    const reg = registration('back');
    await store.heartbeat(reg);
    const deadline = (await deadlineOf(keys, keyOf(reg)))!;
    const hash = keys.pool(keyOf(reg));
    await pastDeadline(deadline);

    expect((await store.heartbeat(reg)).changed).toBe(true);
    const events = await recorder.until((e) => e.length >= 3);
    expect(summary(events)).toEqual([`upsert ${keyOf(reg)} v1`, `lapse ${keyOf(reg)} @${deadline}`, `upsert ${keyOf(reg)} v1`]);
    const fresh = (await deadlineOf(keys, keyOf(reg)))!;
    expect(fresh).toBeGreaterThan(deadline);
    expect(await inspector.pexpiretime(hash)).toBe(fresh + REGISTRATION_BACKSTOP_MS);
    expect((await store.sweep()).lapsed).toBe(0);
    expect((await store.snapshot()).records.map((r) => r.key)).toEqual([keyOf(reg)]);
  });

  it('leaves out of a snapshot a lease past its deadline whose hash outlived it (written by an older version)', async () => {
    const { store, keys } = openStore(SHORT_LEASE_MS);
    const reg = registration('outlived');
    await store.heartbeat(reg);
    const hash = keys.pool(keyOf(reg));
    // Hashes outlive their deadline (by the backstop; older versions' for a few leases).
    await inspector.persist(hash);
    const deadline = (await deadlineOf(keys, keyOf(reg)))!;
    // A snapshot leaves out a lease whose deadline had passed when its read began; one that ends past the
    // deadline may have begun before it, so wait for a read that ended past it and take the next one.
    await eventually(async () => (await store.snapshot()).nowMs >= deadline, { what: 'the deadline', timeoutMs: SHORT_LEASE_MS + 1000 });
    const snapshot = await store.snapshot();
    expect(await inspector.exists(hash)).toBe(1);
    expect(snapshot.records).toEqual([]);
    expect((await store.sweep()).lapsed).toBe(1);
    expect(await inspector.exists(hash)).toBe(0);
  });

  it('ends the old lease in the log when a live deadline has lost its hash', async () => {
    // Not reachable with a clock that only moves forward; a clock stepped back (or a hand on the
    // keyspace) can do it, and followers must not be left holding version 2 of a pool reset to 1.
    const { store, keys } = openStore(LONG_LEASE_MS);
    const reg = registration('orphan');
    await store.heartbeat(reg);
    await store.heartbeat(registration('orphan', 1));
    const recorder = follow(store, (await store.snapshot()).position);
    await inspector.del(keys.pool(keyOf(reg)));

    expect((await store.heartbeat(reg)).changed).toBe(true);
    const events = await recorder.until((e) => e.length >= 2);
    expect(events.map((e) => e.type)).toEqual(['lapse', 'upsert']);
    const [lapse, upsert] = events;
    if (lapse?.type !== 'lapse' || upsert?.type !== 'upsert') throw new Error(`expected lapse, upsert: ${summary(events)}`);
    expect(lapse.key).toBe(keyOf(reg));
    expect(upsert.record).toMatchObject({ key: keyOf(reg), version: 1 });
    // Dated when it was found gone (when the new lease began), not at its deadline a minute ahead.
    expect(lapse.atMs).toBe(upsert.record.renewedAtMs);
  });
});
