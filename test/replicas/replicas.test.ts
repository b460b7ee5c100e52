// Three `poolscope serve` processes on one Redis: one view from every replica, lapses seen
// everywhere within lease + 1 s and logged once, a killed replica forgets nothing, and a Redis outage
// keeps every replica's last view (complete: false) until Redis returns.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { listPools, postJson } from '../support/http.js';
import { redisReplicaFlags, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { SseReader } from '../support/sse.js';
import { useRedis } from '../support/use-redis.js';
import { repeatEvery, throughout, waitFor } from '../support/wait.js';

const LEASE_SECS = 2;
const LEASE_MS = LEASE_SECS * 1000;

const getPools = (replica: PoolscopeProcess): Promise<PoolList> => listPools(replica.url);

const names = async (replica: PoolscopeProcess) => (await getPools(replica)).pools.map((p) => p.name);

describe('three replicas on one Redis', () => {
  const redis = useRedis('replicas');
  let prefix: string;
  let replicas: PoolscopeProcess[];
  const start = () => startPoolscope([...redisReplicaFlags(redis, prefix), `--lease-duration-secs=${LEASE_SECS}`, '--heartbeat-interval-secs=0.5']);

  beforeAll(async () => {
    // One prefix for the replicas of every test here (a replica restarted in a test joins the others).
    prefix = redis.prefix;
    replicas = await Promise.all([start(), start(), start()]);
  });
  afterAll(async () => {
    redis.resume();
    await Promise.all((replicas ?? []).map((r) => r.stop('SIGKILL')));
  });

  it('shows a heartbeat sent to A on B and C, in GET /pools and on their watch streams', async () => {
    const [a, b, c] = replicas as [PoolscopeProcess, PoolscopeProcess, PoolscopeProcess];
    const streams = await Promise.all([SseReader.open(`${b.url}/pools/watch`), SseReader.open(`${c.url}/pools/watch`)]);
    try {
      // A complete resync first: a replica still reading its first snapshot would send the pool in the
      // resync that marks it complete, not as an upsert.
      await waitFor(() => streams.every((s) => s.of('resync').some((m) => (m.data as PoolList).complete)), { timeoutMs: 10_000 });
      expect((await postJson(a.url, registration({ name: 'seen-everywhere' }))).status).toBe(200);
      for (const replica of [a, b, c]) {
        await waitFor(async () => (await names(replica)).includes('seen-everywhere'), { message: `pool on ${replica.url}` });
      }
      for (const stream of streams) {
        const upsert = await waitFor(() =>
          stream.of('upsert').find((m) => (m.data as { pool: { name: string } }).pool.name === 'seen-everywhere'),
        );
        const listed = (await getPools(b)).pools.find((p) => p.name === 'seen-everywhere');
        expect((upsert.data as { pool: unknown }).pool).toEqual(listed);
      }
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
  });

  it('keeps a pool listed on all three under round-robin heartbeats; after they stop it leaves all three within lease + 1 s, lapsed once', async () => {
    const name = 'round-robin';
    let lastBeat = 0;
    let i = 0;
    await throughout(2 * LEASE_MS, 250, async () => {
      if (i > 3) for (const r of replicas) expect(await names(r)).toContain(name);
      const replica = replicas[i++ % 3]!;
      expect((await postJson(replica.url, registration({ name }))).status).toBe(200);
      lastBeat = Date.now();
    });
    await Promise.all(
      replicas.map((r) =>
        waitFor(async () => !(await names(r)).includes(name), { timeoutMs: LEASE_MS + 1500, intervalMs: 20 }),
      ),
    );
    expect(Date.now() - lastBeat).toBeLessThanOrEqual(LEASE_MS + 1000);
    // The change log holds exactly one lapse for the pool, though all three replicas sweep.
    const client = new Redis(redis.url);
    try {
      const entries = await client.xrange(`{${prefix}}:changes`, '-', '+');
      const lapses = entries.filter(([, fields]) => {
        const f = Object.fromEntries(chunk(fields));
        return f.type === 'lapse' && String(f.key).endsWith(`/${name}`);
      });
      expect(lapses).toHaveLength(1);
    } finally {
      client.disconnect();
    }
  });

  it('a replica killed with SIGKILL and restarted lists every live pool on its first complete answer', async () => {
    const pools = ['k1', 'k2', 'k3'];
    const beating = keepBeating(replicas[0]!, pools);
    try {
      await waitFor(async () => (await names(replicas[1]!)).filter((n) => pools.includes(n)).length === 3);
      await replicas[2]!.stop('SIGKILL');
      replicas[2] = await start();
      const first = await waitFor(async () => {
        const list = await getPools(replicas[2]!);
        return list.complete && list;
      });
      expect(first.pools.map((p) => p.name)).toEqual(expect.arrayContaining(pools));
    } finally {
      await beating.stop();
    }
  });

  it('keeps the last view with complete: false while Redis is frozen, answers POST with 503, and converges after Redis returns', async () => {
    const pools = ['outage-a', 'outage-b'];
    const beating = keepBeating(replicas[0]!, pools);
    try {
      await Promise.all(replicas.map((r) => waitFor(async () => (await names(r)).filter((n) => pools.includes(n)).length === 2)));
      redis.pause();
      const pausedAt = Date.now();
      // Every replica notices within its command timeout and keeps serving the last view.
      for (const replica of replicas) {
        const list = await waitFor(async () => {
          const l = await getPools(replica);
          return !l.complete && l;
        }, { timeoutMs: 3000, message: `complete: false on ${replica.url}` });
        expect(list.pools.map((p) => p.name)).toEqual(expect.arrayContaining(pools));
      }
      const refused = await postJson(replicas[1]!.url, registration({ name: 'during-outage' }));
      expect(refused.status).toBe(503);
      expect((await fetch(`${replicas[1]!.url}/healthz`)).status).toBe(503);
      // Until a lease and a second past the pause (the last heartbeat came before it, and a sweep runs
      // every 250 ms), nobody drops a pool: a replica that lapsed leases on its own clock would have by then.
      await throughout(pausedAt + LEASE_MS + 1000 - Date.now(), 100, async () => {
        for (const replica of replicas) expect(await names(replica)).toEqual(expect.arrayContaining(pools));
      });
      expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(LEASE_MS + 1000);
      redis.resume();
      for (const replica of replicas) {
        await waitFor(async () => {
          const l = await getPools(replica);
          return l.complete && pools.every((p) => l.pools.some((x) => x.name === p));
        }, { timeoutMs: 10_000, message: `converged on ${replica.url}` });
      }
      // The change log is followed again: a new registration reaches every replica.
      expect((await postJson(replicas[2]!.url, registration({ name: 'after-outage' }))).status).toBe(200);
      for (const replica of replicas) {
        await waitFor(async () => (await names(replica)).includes('after-outage'));
      }
    } finally {
      await beating.stop();
    }
  });

  it('keeps every pool through a Redis restart that lost all data: complete: false for a lease, then converged; a pool whose relay stopped is not resurrected', async () => {
    const pools = ['reset-a', 'reset-b', 'reset-c'];
    const gone = 'reset-gone';
    // Heartbeats well apart (within the lease), so replicas re-read the emptied Redis before they return.
    const beating = keepBeating(replicas[1]!, pools, LEASE_MS * 0.7);
    const goneBeating = keepBeating(replicas[1]!, [gone], LEASE_MS * 0.7);
    try {
      await Promise.all(
        replicas.map((r) => waitFor(async () => (await names(r)).filter((n) => [...pools, gone].includes(n)).length === 4)),
      );
      // Watch every replica's list from now on: every answer is a pool list (no error, no refused
      // request), none lacks a beating pool, complete or not, and each replica says complete: false.
      const violations: string[] = [];
      const incomplete = new Set<string>();
      const watcher = repeatEvery(20, async () => {
        for (const replica of replicas) {
          let list: PoolList;
          try {
            list = await getPools(replica);
          } catch (error) {
            violations.push(`${replica.url} did not answer a pool list: ${(error as Error).message}`);
            continue;
          }
          if (!list.complete) incomplete.add(replica.url);
          const missing = pools.filter((p) => !list.pools.some((x) => x.name === p));
          if (missing.length > 0) violations.push(`${replica.url} complete=${list.complete} missing ${missing.join(',')}`);
        }
      });
      // The gone pool's relay stops, within its lease of the data loss.
      await goneBeating.stop();
      await redis.restart();
      for (const replica of replicas) {
        await waitFor(async () => {
          const l = await getPools(replica);
          return l.complete && pools.every((p) => l.pools.some((x) => x.name === p)) && !l.pools.some((x) => x.name === gone);
        }, { timeoutMs: LEASE_MS * 3 + 5000, message: `complete again on ${replica.url}, without ${gone}` });
      }
      await watcher.stop();
      expect(violations).toEqual([]);
      expect([...incomplete].sort()).toEqual(replicas.map((r) => r.url).sort());
      // Not resurrected: no replica writes what it held back into the new Redis, so it stays gone, everywhere.
      await throughout(LEASE_MS + 500, 100, async () => {
        for (const replica of replicas) expect(await names(replica)).not.toContain(gone);
      });
      const client = new Redis(redis.url);
      try {
        const keys = await client.keys(`{${prefix}}:pool:*`);
        expect(keys.filter((key) => key.includes(gone))).toEqual([]);
        expect(keys.filter((key) => pools.some((p) => key.endsWith(p)))).toHaveLength(pools.length);
      } finally {
        client.disconnect();
      }
    } finally {
      await goneBeating.stop();
      await beating.stop();
    }
  });
});

/** PoolRelays heartbeating `names` to `replica` every `everyMs` (retrying through 503s) until stopped. */
function keepBeating(replica: PoolscopeProcess, pools: string[], everyMs = 250): { stop(): Promise<void> } {
  return repeatEvery(everyMs, () => Promise.all(pools.map((name) => postJson(replica.url, registration({ name })).catch(() => undefined))));
}

function chunk(fields: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) out.push([fields[i]!, fields[i + 1]!]);
  return out;
}
