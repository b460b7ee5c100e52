// Bad data in the store (docs/contract.md §8): an entry this version cannot read, written by hand (XADD,
// HSET) or by anyone else, is logged (a warning naming it) and counted, and only that entry is skipped:
// the follower reads on past a garbage change log entry without re-reading a snapshot, a snapshot leaves
// out only the pool whose hash is unreadable, and the service's view stays complete and current.
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis/index.js';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import type { RegistrationStore } from '../../src/store/types.js';
import { listPools, postJson, request } from '../support/http.js';
import { captureLogs, type CapturedLogs } from '../support/logs.js';
import { startService } from '../support/service.js';
import { useRedis } from '../support/use-redis.js';
import { throughout, waitFor } from '../support/wait.js';
import { keyOf, registration, WatchRecorder } from './contract-support.js';

const redis = useRedis('unreadable');
let inspector: Redis;
let logs: CapturedLogs;
let store: RegistrationStore;

beforeEach(() => {
  inspector = new Redis(redis.url, { lazyConnect: true });
  logs = captureLogs('info');
  store = createRedisStore({ url: redis.url, prefix: redis.prefix, leaseMs: 60_000, commandTimeoutMs: 1000, logger: logs.logger });
});
afterEach(async () => {
  await store.close();
  inspector.disconnect();
});

describe('unreadable entries in the Redis store', () => {
  it('skips a garbage change log entry, logs and counts it, and follows on without a snapshot', async () => {
    const keys = createStoreKeys(redis.prefix);
    const recorder = new WatchRecorder(store, (await store.snapshot()).position);
    try {
      const garbage = [
        (await inspector.xadd(keys.changes, '*', 'hello', 'world'))!,
        (await inspector.xadd(keys.changes, '*', 'type', 'upsert', 'key', 'c/n/x', 'registration', '{not json', 'renewed_at_ms', '1', 'lease_ms', '1', 'version', '1'))!,
      ];
      const after = registration('after-garbage');
      await store.heartbeat(after);
      const events = await recorder.untilUpsertOf(keyOf(after));
      expect(recorder.error).toBeUndefined();
      expect(events.map((e) => (e.type === 'upsert' ? e.record.key : e.key))).toEqual([keyOf(after)]);
      expect(store.stats?.().unreadableEntries).toBe(2);
      const warnings = logs.warnings().filter((l) => l.msg === 'unreadable change log entry skipped');
      expect(warnings.map((l) => l.stream_id)).toEqual(garbage);
      expect(warnings[0]).toMatchObject({ redis: expect.any(String), err: expect.stringContaining('has no type') });
    } finally {
      await recorder.stop();
    }
  });

  it('leaves out of a snapshot only the pool whose hash cannot be read, and counts it', async () => {
    const keys = createStoreKeys(redis.prefix);
    const [good, bad] = [registration('good'), registration('bad')];
    await store.heartbeat(good);
    await store.heartbeat(bad);
    await inspector.hset(keys.pool(keyOf(bad)), 'registration', '{not json');
    const snapshot = await store.snapshot();
    expect(snapshot.records.map((r) => r.key)).toEqual([keyOf(good)]);
    expect(store.stats?.().unreadableEntries).toBe(1);
    expect(logs.warnings().find((l) => l.msg === 'unreadable pool entry skipped')).toMatchObject({ pool: keyOf(bad) });
  });
});

describe('the service with an unreadable change log entry', () => {
  it('stays complete and current, and counts the entry in /metrics', async () => {
    const svc = await startService({
      registrationStorage: 'redis',
      redisUrl: redis.url,
      redisPrefix: redis.prefix,
      redisCommandTimeoutMs: 1000,
      leaseMs: 60_000,
      socket: false,
    });
    try {
      expect((await postJson(svc.app, registration('before'))).status).toBe(200);
      await waitFor(async () => (await listPools(svc.app)).complete && (await listPools(svc.app)).pools.length === 1, {
        message: 'complete with the first pool',
      });
      // The pools' feed's snapshots: the routers' feed logs its own, with lease_kind "routers", whenever it reads.
      const snapshots = () => svc.logs.lines.filter((l) => l.msg === 'store snapshot applied' && l.lease_kind === undefined).length;
      const snapshotsBefore = snapshots();
      await inspector.xadd(createStoreKeys(redis.prefix).changes, '*', 'type', 'from-a-newer-version');
      expect((await postJson(svc.app, registration('after'))).status).toBe(200);
      await waitFor(async () => (await listPools(svc.app)).pools.length === 2, { message: 'the pool after the garbage' });
      // Complete throughout, and never re-read: the entry was skipped, not treated as a lost position.
      await throughout(300, 20, async () => expect((await listPools(svc.app)).complete).toBe(true));
      expect(snapshots()).toBe(snapshotsBefore);
      const metrics = await (await request(svc.app, '/metrics')).text();
      expect(metrics).toMatch(/^poolscope_store_unreadable_entries_total 1$/m);
      expect(svc.logs.warnings().find((l) => l.msg === 'unreadable change log entry skipped')).toMatchObject({
        component: 'redis-store',
        stream_id: expect.stringMatching(/^\d+-\d+$/),
      });
    } finally {
      await svc.stop();
    }
  });
});
