// The store contract on a real redis-server (three store instances on one server act as three replicas),
// plus what only the Redis store has: escaped keys that never touch another pool's keys.
import { Redis } from 'ioredis';
import { silentLogger } from '../support/logs.js';
import { describe, expect, it } from 'vitest';
import type { Registration } from '../../src/contract/index.js';
import { createRedisStore } from '../../src/store/redis/index.js';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import type { LeaseRecord, RegistrationStore } from '../../src/store/types.js';
import { randomPrefix, startPrivateRedis } from '../support/redis-server.js';
import { useRedis } from '../support/use-redis.js';
import { describeStoreContract } from './contract.js';
import { eventually, pause, registration, ReplayedView, WatchRecorder } from './contract-support.js';

const logger = silentLogger();
const redis = useRedis();

function openStore(prefix: string, leaseMs: number, changeLogCap?: number): RegistrationStore {
  return createRedisStore({ url: redis.url, prefix, leaseMs, commandTimeoutMs: 1000, logger, changeLogCap });
}

describeStoreContract('redis', {
  async open({ leaseMs, changeLogCap }) {
    const prefix = randomPrefix();
    const stores: RegistrationStore[] = [];
    return {
      async replica() {
        const store = openStore(prefix, leaseMs, changeLogCap);
        stores.push(store);
        return store;
      },
      close: async () => void (await Promise.all(stores.map((store) => store.close()))),
    };
  },
});

describe('redis store', () => {
  const hostile: Registration[] = [
    registration('plain'),
    registration('A'),
    // Would read as "A" if a literal % were not escaped itself.
    registration('%41'),
    { ...registration('x'), cluster_id: '{poolscope}', namespace: 'ns:deadlines' },
    { ...registration('x'), cluster_id: '}', namespace: '{', name: ':changes' },
    { ...registration('x'), cluster_id: 'ümlaut 🚀', namespace: ' spaced out ', name: '\r\n*1\r\n$4\r\nPING' },
    { ...registration('x'), cluster_id: '', namespace: '', name: '' },
  ];

  it('keeps hostile pool keys apart, under its own hash tag, and gives them back exactly', async () => {
    const prefix = randomPrefix('hostile');
    const store = openStore(prefix, 60_000);
    const inspector = new Redis(redis.url, { lazyConnect: true });
    try {
      for (const reg of hostile) expect((await store.heartbeat(reg)).changed).toBe(true);
      const keys = createStoreKeys(prefix);
      const expected = [keys.deadlines, keys.changes, ...hostile.map((reg) => keys.pool(keyOf(reg)))];
      expect(new Set(expected).size).toBe(hostile.length + 2);
      const stored = await inspector.keys(`{${prefix}}*`);
      expect(stored.sort()).toEqual(expected.sort());
      for (const key of stored) {
        // One hash tag, at the start: the escaped part holds no brace that could move it.
        expect(key.startsWith(`{${prefix}}:`)).toBe(true);
        expect(key.slice(prefix.length + 2)).toMatch(/^:[A-Za-z0-9._%:-]*$/);
      }

      const records = (await store.snapshot()).records;
      expect(new Map(records.map((r) => [r.key, r.registration]))).toEqual(new Map(hostile.map((reg) => [keyOf(reg), reg])));
      for (const reg of hostile) expect((await store.heartbeat(reg)).changed).toBe(false);
    } finally {
      inspector.disconnect();
      await store.close();
    }
  });

  it('lapses a hostile key without touching any other pool', async () => {
    const prefix = randomPrefix('hostile-lapse');
    const long = openStore(prefix, 60_000);
    const short = openStore(prefix, 200);
    try {
      for (const reg of hostile.slice(1)) await long.heartbeat(reg);
      const victim = hostile[0]!;
      await short.heartbeat(victim);
      await eventually(async () => (await short.sweep()).lapsed === 1, { what: 'the lapse', timeoutMs: 1500 });
      const left = (await long.snapshot()).records.map((r) => r.key).sort();
      expect(left).toEqual(hostile.slice(1).map(keyOf).sort());
    } finally {
      await Promise.all([long.close(), short.close()]);
    }
  });

  it('reads a snapshot in steps that stays exact while pools change under it', async () => {
    const prefix = randomPrefix('steps');
    // 12,000 long leases: two ZSCAN steps of up to 10,000 members, 12 read scripts. A second instance churns
    // with short leases (new pools, changed content, lapses) while a third reads snapshots and follows.
    const [bulk, churn, reader] = [openStore(prefix, 60_000), openStore(prefix, 300), openStore(prefix, 60_000)];
    const recorders: WatchRecorder[] = [];
    try {
      for (let i = 0; i < 12_000; i += 1000) {
        await Promise.all(Array.from({ length: 1000 }, (_, j) => bulk.heartbeat(registration(`bulk-${i + j}`))));
      }
      const churnUntil = Date.now() + 1200;
      const heartbeats = (async () => {
        while (Date.now() < churnUntil) {
          const n = Math.floor(Math.random() * 1500);
          const name = Math.random() < 0.5 ? `bulk-${n}` : `new-${n % 200}`;
          await Promise.all([churn.heartbeat(registration(name, 1 + (n % 3))), pause(1)]);
        }
      })();
      const sweeps = (async () => {
        while (Date.now() < churnUntil - 100) {
          await churn.sweep();
          await pause(20);
        }
      })();
      const views: ReplayedView[] = [];
      for (let i = 0; i < 3; i += 1) {
        const snapshot = await reader.snapshot();
        const view = new ReplayedView(snapshot);
        views.push(view);
        recorders.push(new WatchRecorder(reader, snapshot.position, (event) => view.apply(event)));
        await pause(300);
      }
      await Promise.all([heartbeats, sweeps]);
      // Pool hashes expire with their leases: let the churned leases run out and sweep them, so the views
      // (which learn lapses from the log) and the final snapshot (which never holds an expired lease) agree.
      const churnEnded = (await churn.snapshot()).nowMs;
      await eventually(async () => (await churn.snapshot()).nowMs > churnEnded + 300, { what: 'the churned leases to run out' });
      await churn.sweep();
      const marker = registration('marker');
      await bulk.heartbeat(marker);
      for (const recorder of recorders) await recorder.untilUpsertOf(`us-east-1/llm/marker`);
      // Read as a consumer that applies leases as they come: handed over a read script's worth at a time,
      // before the snapshot settles, and, with nothing changing meanwhile, each the very record it settles with.
      const parts: LeaseRecord[][] = [];
      let settled = false;
      const reading = reader.snapshot((records) => {
        expect(settled).toBe(false);
        parts.push(records);
      });
      void reading.then(() => (settled = true));
      const last = await reading;
      expect(parts.length).toBeGreaterThanOrEqual(12);
      expect(Math.max(...parts.map((part) => part.length))).toBeLessThanOrEqual(1000);
      const handed = new Map(parts.flat().map((record) => [record.key, record]));
      expect(handed.size).toBe(last.records.length);
      for (const record of last.records) expect(handed.get(record.key)).toBe(record);
      const truth = ReplayedView.of(last);
      expect(truth.size).toBeGreaterThan(1000);
      for (const view of views) expect(new Map([...view.pools].sort())).toEqual(new Map([...truth].sort()));
    } finally {
      await Promise.all(recorders.map((r) => r.stop()));
      await Promise.all([bulk.close(), churn.close(), reader.close()]);
    }
  });

  it('hands over as read only leases live as the read began, and none the read then leaves out', async () => {
    const prefix = randomPrefix('handed');
    const [long, short] = [openStore(prefix, 60_000), openStore(prefix, 40)];
    try {
      await long.heartbeat(registration('long'));
      await short.heartbeat(registration('ran-out'));
      // Run out on the store's clock, not swept: its hash and deadline are still there to be read.
      const ranOutAt = (await long.snapshot()).nowMs + 60;
      await eventually(async () => (await long.snapshot()).nowMs > ranOutAt, { what: 'the short lease to run out' });
      const handed: string[] = [];
      const snapshot = await long.snapshot((records) => handed.push(...records.map((r) => r.key)));
      expect(handed).toEqual(['us-east-1/llm/long']);
      expect(snapshot.records.map((r) => r.key)).toEqual(['us-east-1/llm/long']);
    } finally {
      await Promise.all([long.close(), short.close()]);
    }
  });

  it('keeps in a snapshot a pool renewed, silently, after its step was read', async () => {
    const prefix = randomPrefix('silent');
    // A lease shorter than the read of 15,000 pools (two ZSCAN steps, pipelined): the renewed pool's hash is
    // read with a deadline that passes before the read ends, while renewals (which log nothing) keep the
    // lease itself live.
    const [bulk, renewed, reader] = [openStore(prefix, 60_000), openStore(prefix, 40), openStore(prefix, 60_000)];
    const pool = registration('renewed-every-5-ms');
    let renewing = true;
    const renewals = (async () => {
      while (renewing) await Promise.all([renewed.heartbeat(pool), pause(5)]);
    })();
    try {
      for (let i = 0; i < 15_000; i += 500) {
        await Promise.all(Array.from({ length: 500 }, (_, j) => bulk.heartbeat(registration(`bulk-${i + j}`))));
      }
      let outlasted = 0;
      for (let attempt = 0; attempt < 10 && outlasted < 2; attempt += 1) {
        const started = performance.now();
        const snapshot = await reader.snapshot();
        // Only meaningful when the read outlasted the lease: then a record's deadline as read has passed.
        if (performance.now() - started < 40) continue;
        outlasted += 1;
        expect(snapshot.records.map((r) => r.key)).toContain(`us-east-1/llm/${pool.name}`);
      }
      expect(outlasted, 'snapshots that outlasted the lease').toBeGreaterThan(0);
    } finally {
      renewing = false;
      await renewals;
      await Promise.all([bulk.close(), renewed.close(), reader.close()]);
    }
  });

  it('refuses a pool key that is not well-formed Unicode (it could collide with another)', async () => {
    const store = openStore(randomPrefix(), 60_000);
    try {
      await expect(store.heartbeat({ ...registration('x'), name: 'lone \ud800' })).rejects.toThrow(/well-formed/);
    } finally {
      await store.close();
    }
  });

  it('remembers its leases and its log across a restart of the store and of redis-server (with persistence)', async () => {
    // A Redis of its own that writes every change to its append-only file, so a SIGKILL loses nothing.
    const persistent = await startPrivateRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
    const prefix = randomPrefix('restart');
    const open = () => createRedisStore({ url: persistent.url, prefix, leaseMs: 60_000, commandTimeoutMs: 1000, logger });
    try {
      const first = open();
      const kept = registration('kept');
      await first.heartbeat(kept);
      const before = await first.snapshot();
      await first.close();

      await persistent.restart();
      const second = open();
      const recorder = new WatchRecorder(second, before.position);
      try {
        expect(second.forgetsOnRestart).toBe(false);
        const after = await eventually(() => second.snapshot().catch(() => undefined), { what: 'a snapshot after the restart' });
        expect(after.records.map((r) => [r.key, r.version, r.deadlineMs])).toEqual([[keyOf(kept), 1, before.records[0]!.deadlineMs]]);
        // The same data lifetime (no refill), and the log reaches back to where the first store was.
        expect(after.epoch).toBe(before.epoch);
        expect(after.position).toBe(before.position);
        const changed = registration('kept', 1);
        expect((await second.heartbeat(changed)).changed).toBe(true);
        const [event] = await recorder.untilUpsertOf(keyOf(changed));
        expect(event).toMatchObject({ type: 'upsert', record: { key: keyOf(changed), version: 2 } });
      } finally {
        await recorder.stop();
        await second.close();
      }
    } finally {
      await persistent.stop();
    }
  });
});

function keyOf(reg: Registration): string {
  return `${reg.cluster_id}/${reg.namespace}/${reg.name}`;
}
