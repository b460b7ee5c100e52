// The Redis store on a local Redis Cluster of three masters: every script touches only keys of the
// store's one hash tag, passed in KEYS, so it runs on whichever master owns that slot.
import { silentLogger } from '../support/logs.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis/index.js';
import type { RegistrationStore } from '../../src/store/types.js';
import { startRedisCluster, type LocalRedisCluster } from '../support/redis-cluster.js';
import { randomPrefix } from '../support/redis-server.js';
import { eventually, keyOf, registration, WatchRecorder } from './contract-support.js';

let cluster: LocalRedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
});
afterAll(async () => {
  await cluster?.stop();
});

describe('redis store on Redis Cluster', () => {
  it('runs the heartbeat, snapshot, watch and sweep cycle', async () => {
    const prefix = randomPrefix('cluster');
    const open = (leaseMs: number): RegistrationStore =>
      createRedisStore({ url: cluster.url, prefix, leaseMs, commandTimeoutMs: 1000, logger: silentLogger() });
    const [writer, reader] = [open(300), open(300)];
    const recorder = new WatchRecorder(reader, (await reader.snapshot()).position);
    try {
      const regs = Array.from({ length: 5 }, (_, i) => registration(`pool-${i}`));
      for (const reg of regs) expect((await writer.heartbeat(reg)).changed).toBe(true);
      expect((await writer.heartbeat(registration('pool-0', 1))).changed).toBe(true);
      expect((await reader.snapshot()).records.map((r) => r.key).sort()).toEqual(regs.map(keyOf).sort());

      let lapsed = 0;
      await eventually(async () => (lapsed += (await reader.sweep()).lapsed) === regs.length, { what: 'the lapses', timeoutMs: 2000 });
      expect((await writer.snapshot()).records).toEqual([]);
      const events = await recorder.until((e) => e.length === 2 * regs.length + 1);
      expect(events.filter((e) => e.type === 'upsert')).toHaveLength(regs.length + 1);
      expect(new Set(events.filter((e) => e.type === 'lapse').map((e) => (e.type === 'lapse' ? e.key : '')))).toEqual(
        new Set(regs.map(keyOf)),
      );
    } finally {
      await recorder.stop();
      await Promise.all([writer.close(), reader.close()]);
    }
  });
});
