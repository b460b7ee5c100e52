// The redis+sentinel:// form end to end: the store asks a Sentinel for the master and works on it.
import { silentLogger } from '../support/logs.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis/index.js';
import { startRedisSentinel, type LocalRedisSentinel } from '../support/redis-sentinel.js';
import { randomPrefix } from '../support/redis-server.js';
import { keyOf, registration, WatchRecorder } from './contract-support.js';

let sentinel: LocalRedisSentinel;
beforeAll(async () => {
  sentinel = await startRedisSentinel();
});
afterAll(async () => {
  await sentinel?.stop();
});

describe('redis store through Sentinel', () => {
  it('finds the master and keeps leases on it', async () => {
    const store = createRedisStore({
      url: sentinel.url,
      prefix: randomPrefix('sentinel'),
      leaseMs: 60_000,
      commandTimeoutMs: 1000,
      logger: silentLogger(),
    });
    const recorder = new WatchRecorder(store, (await store.snapshot()).position);
    try {
      const reg = registration('via-sentinel');
      expect((await store.heartbeat(reg)).changed).toBe(true);
      const [event] = await recorder.untilUpsertOf(keyOf(reg));
      expect(event).toMatchObject({ type: 'upsert', record: { key: keyOf(reg), version: 1 } });
      expect((await store.snapshot()).records.map((r) => r.key)).toEqual([keyOf(reg)]);
    } finally {
      await recorder.stop();
      await store.close();
    }
  });
});
