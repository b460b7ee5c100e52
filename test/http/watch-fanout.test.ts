// GET /pools/watch under many watchers (docs/contract.md §8): HEAD subscribes nothing, an event is
// serialized once whatever the number of watchers, --max-watchers refuses the next one with 503
// too_many_watchers and Retry-After, and 5,000 watchers all get 20 changes while /healthz answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, request } from '../support/http.js';
import { pool as listedPool } from '../support/listed-pool.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { metricSample, rawConnect, WATCH_REQUEST, type RawConnection } from './raw-client.js';

describe('GET /pools/watch, in process', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 60_000, maxWatchers: 60 });
  });
  afterAll(() => svc.stop());

  it('answers HEAD without subscribing (50 HEADs leave the subscriber count where it was)', async () => {
    const watcher = await SseReader.open(svc.url, '/pools/watch');
    await waitFor(() => watcher.messages.length >= 1, { message: 'first resync' });
    await waitFor(async () => (await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'pools' })) === 1, { message: 'one watcher' });
    for (let i = 0; i < 50; i++) {
      const head = await fetch(`${svc.url}/pools/watch`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
    }
    expect(await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'pools' })).toBe(1);
    // A change reaches the one real watcher; nothing is queued for the HEADs.
    expect((await postJson(svc.url, registration({ name: 'head-check' }))).status).toBe(200);
    await waitFor(() => watcher.of('upsert').length === 1, { message: 'upsert' });
    expect(await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'pools' })).toBe(1);
    await watcher.close();
    await waitFor(async () => (await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'pools' })) === 0, { message: 'no watcher' });
  });

  it('serializes an event once for all its watchers', async () => {
    const watchers = await Promise.all(Array.from({ length: 50 }, () => SseReader.open(svc.app, '/pools/watch')));
    try {
      await waitFor(() => watchers.every((w) => w.messages.length >= 1), { message: 'every resync' });
      let serialized = 0;
      const pool = listedPool('counted', { namespace: 'ns', model: 'm', frontends: [], state: 'frontendless' });
      const { ...plain } = pool;
      Object.defineProperty(pool, 'toJSON', {
        enumerable: false,
        value: () => {
          serialized += 1;
          return plain;
        },
      });
      svc.join.view.update('c1/ns/counted', pool);
      await waitFor(() => watchers.every((w) => w.of('upsert').some((m) => (m.data as { pool: { name: string } }).pool.name === 'counted')), {
        message: 'the upsert on every watcher',
      });
      // Once by the view (to compare with what it held), once for the event: not once per watcher.
      expect(serialized).toBeLessThanOrEqual(2);
      svc.join.view.update('c1/ns/counted', null);
    } finally {
      await Promise.all(watchers.map((w) => w.close()));
    }
  });

  it('refuses a watcher beyond --max-watchers with 503 too_many_watchers and Retry-After', async () => {
    const watchers = await Promise.all(Array.from({ length: 60 }, () => SseReader.open(svc.app, '/pools/watch')));
    try {
      const refused = await request(svc.app, '/pools/watch');
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('too_many_watchers');
      expect(body.error.message).toMatch(/60/);
      expect(await metricSample(svc.url, 'poolscope_watch_refused_total', { stream: 'pools' })).toBe(1);
    } finally {
      await Promise.all(watchers.map((w) => w.close()));
    }
    // Room again once one leaves.
    const again = await SseReader.open(svc.app, '/pools/watch');
    await waitFor(() => again.messages.length >= 1, { message: 'resync after the others left' });
    await again.close();
  });
});

describe('5,000 watchers of the real binary', () => {
  const WATCHERS = 5_000;
  const CHANGES = 20;
  let replica: PoolscopeProcess;
  beforeAll(async () => {
    replica = await startPoolscope(['--lease-duration-secs=600', '--heartbeat-interval-secs=5'], { env: { POOLSCOPE_LOG_LEVEL: 'warn' } });
  });
  afterAll(() => replica?.stop());

  it('delivers 20 changes to every watcher while /healthz answers', async () => {
    const watchers: RawConnection[] = [];
    for (let i = 0; i < WATCHERS; i += 250) {
      watchers.push(...(await Promise.all(Array.from({ length: Math.min(250, WATCHERS - i) }, () => rawConnect(replica.port, WATCH_REQUEST)))));
    }
    try {
      await waitFor(() => watchers.every((w) => w.count('event: resync') >= 1), { timeoutMs: 60_000, message: 'every resync' });
      expect(await metricSample(replica.url, 'poolscope_watch_subscribers', { stream: 'pools' })).toBe(WATCHERS);
      const health: number[] = [];
      const probe = repeatEvery(20, async () => health.push((await fetch(`${replica.url}/healthz`)).status));
      try {
        for (let i = 0; i < CHANGES; i++) expect((await postJson(replica.url, registration({ name: `fan-${i}` }))).status).toBe(200);
        await waitFor(() => watchers.every((w) => w.count('event: upsert') === CHANGES), { timeoutMs: 60_000, message: 'every upsert on every watcher' });
      } finally {
        await probe.stop();
      }
      expect(health.length).toBeGreaterThan(0);
      expect(health.every((status) => status === 200)).toBe(true);
      expect(replica.stderr()).toBe('');
    } finally {
      for (const w of watchers) w.socket.destroy();
    }
  }, 120_000);
});
