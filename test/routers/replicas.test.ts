// Router registrations over three replicas on one real redis-server: a heartbeat to one is listed by all
// three (GET /routers and the watch stream), kept under keys of its own beside the pools', lapsed on time
// everywhere once heartbeats stop, and a replica started afresh forgets nothing (complete at once, with
// the routers still leased).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouterList } from '../../src/contract/index.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { useRedis } from '../support/use-redis.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { listRouters, postRouter } from './support.js';

const LEASE_MS = 1500;

describe('router registrations on three replicas sharing one Redis', () => {
  const redis = useRedis('routers');
  let prefix: string;
  let replicas: TestService[] = [];
  const start = () =>
    startService({ registrationStorage: 'redis', redisUrl: redis.url, redisPrefix: prefix, leaseMs: LEASE_MS, heartbeatIntervalMs: 500 });

  beforeAll(async () => {
    prefix = redis.prefix;
    replicas = await Promise.all([start(), start(), start()]);
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  it('lists a router registered on A on B and C, on their watch streams too, under router keys of its own', async () => {
    const [a, b, c] = replicas as [TestService, TestService, TestService];
    const streams = await Promise.all([SseReader.open(b.url, '/routers/watch'), SseReader.open(c.url, '/routers/watch')]);
    try {
      await waitFor(() => streams.every((s) => s.of('resync').some((m) => (m.data as RouterList).complete)), { timeoutMs: 10_000 });
      expect((await postRouter(a.url, { id: 'gr-seen', url: 'http://10.0.1.5:9100', region: 'us-east-1' })).status).toBe(200);
      // A pool beside it: the two lists do not mix.
      expect((await postJson(a.url, registration({ name: 'beside' }))).status).toBe(200);
      for (const replica of replicas) {
        const list = await waitFor(async () => {
          const body = await listRouters(replica.url);
          return body.routers.some((r) => r.id === 'gr-seen') && body;
        });
        expect(list.complete).toBe(true);
        expect(list.routers).toEqual([{ id: 'gr-seen', url: 'http://10.0.1.5:9100', region: 'us-east-1', source: 'registration' }]);
      }
      for (const stream of streams) {
        const upsert = await waitFor(() => stream.of('upsert').find((m) => (m.data as { router: { id: string } }).router.id === 'gr-seen'));
        expect((upsert.data as { router: unknown }).router).toEqual({ id: 'gr-seen', url: 'http://10.0.1.5:9100', region: 'us-east-1', source: 'registration' });
      }
      const client = new Redis(redis.url);
      try {
        expect(await client.exists(`{${prefix}}:router:gr-seen`)).toBe(1);
        expect(await client.zscore(`{${prefix}}:router-deadlines`, 'gr-seen')).not.toBeNull();
        expect(await client.zscore(`{${prefix}}:deadlines`, 'gr-seen')).toBeNull();
        expect(await client.xlen(`{${prefix}}:router-changes`)).toBeGreaterThan(0);
      } finally {
        client.disconnect();
      }
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
  });

  it('keeps a router listed under heartbeats round-robin; once they stop, it leaves all three within lease + 1 s', async () => {
    let turn = 0;
    const beat = repeatEvery(300, () => postRouter(replicas[turn++ % 3]!.url, { id: 'gr-beat', url: 'http://10.0.1.6:9100' }));
    try {
      for (const replica of replicas) await waitFor(async () => (await listRouters(replica.url)).routers.some((r) => r.id === 'gr-beat'));
      // Past two leases, still listed on every replica.
      const until = Date.now() + 2 * LEASE_MS;
      while (Date.now() < until) {
        for (const replica of replicas) expect((await listRouters(replica.url)).routers.map((r) => r.id)).toContain('gr-beat');
      }
    } finally {
      await beat.stop();
    }
    const stopped = Date.now();
    await Promise.all(
      replicas.map((replica) =>
        waitFor(async () => !(await listRouters(replica.url)).routers.some((r) => r.id === 'gr-beat'), { timeoutMs: LEASE_MS + 3000 }),
      ),
    );
    expect(Date.now() - stopped).toBeLessThan(LEASE_MS + 1000 + 500);
  });

  it('a replica restarted forgets nothing: a router still renewed is listed by it at once, complete', async () => {
    const beat = repeatEvery(300, () => postRouter(replicas[0]!.url, { id: 'gr-kept', url: 'http://10.0.1.7:9100' }));
    try {
      await waitFor(async () => (await listRouters(replicas[2]!.url)).routers.some((r) => r.id === 'gr-kept'));
      await replicas[2]!.stop();
      replicas[2] = await start();
      const list = await waitFor(async () => {
        const body = await listRouters(replicas[2]!.url);
        return body.complete && body;
      });
      // The first complete answer already holds it: nothing was forgotten, nothing waits for a heartbeat.
      expect(list.routers.map((r) => r.id)).toContain('gr-kept');
    } finally {
      await beat.stop();
    }
  });
});
