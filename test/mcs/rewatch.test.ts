// Completeness while the sources are re-read (docs/contract.md §5): a source that cannot be read at
// start is read later; a watch that ends is watched again; meanwhile GET /pools and the SSE stream keep
// the last view, marked `complete: false`; the backoff (0.8 s doubling to 30 s, jitter) starts over once
// the source is synced again. The backoff's waits are handed to the test (BackoffGate), never slept.
import { afterEach, describe, expect, it } from 'vitest';
import { MIN_QUIET_WATCH_MS } from '../../src/kube/slice-source.js';
import { expectBackoff } from '../support/backoff.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import type { SseReader } from '../support/sse.js';
import { useRedis } from '../support/use-redis.js';
import { eventually, waitFor } from '../support/wait.js';
import { listedNames, startMcsService, stopMcsServices, type McsService } from './support/mcs-service.js';
import { joinedPoolSlices, poolKeyOf, slice } from './support/slices.js';

const redis = useRedis('mcs');
afterEach(stopMcsServices);

const pool = { cluster: 'gpu-east-1', namespace: 'llm', pool: 'steady' };
const key = poolKeyOf(pool);

type Resync = { complete: boolean; pools: Array<{ name: string; model: string }> };
const resyncs = (stream: SseReader) => stream.of('resync').map((m) => m.data as Resync);

async function readyz(service: McsService): Promise<{ status: number; message: string }> {
  const response = await fetch(`${service.url}/readyz`);
  const body = (await response.json()) as { error?: { message: string } };
  return { status: response.status, message: body.error?.message ?? '' };
}

/** A service whose pool is live and whose view is complete, with a stream opened on it. */
async function steadyService(): Promise<{ service: McsService; stream: SseReader }> {
  const service = await startMcsService({ redis });
  for (const object of joinedPoolSlices({ flavour: 'mcs', ...pool, n: 1 })) service.fake.add(object);
  await service.heartbeat(pool);
  await eventually(async () => expect(await service.pools()).toMatchObject({ complete: true, pools: [{ name: 'steady', state: 'live' }] }));
  const stream = await service.watch();
  await waitFor(() => resyncs(stream).length === 1, { message: 'the first resync' });
  return { service, stream };
}

describe('re-reading the sources', () => {
  it('sources that cannot be read at start are read later; meanwhile the view is incomplete and not ready', async () => {
    const fake = await FakeKubeApi.start();
    for (const object of joinedPoolSlices({ flavour: 'mcs', ...pool, n: 1 })) fake.add(object);
    fake.failNextLists(500, 'drop', 500, 500, 500, 500, 500, 500);
    // Redis answers nothing at start (SIGSTOP: connections open, no replies).
    redis.pause();
    let service: McsService;
    try {
      service = await startMcsService({ redis, fake, holdBackoff: true });
      await waitFor(() => service.backoff.waiting === 1, { message: 'the source in its backoff' });
      await waitFor(() => service.join.sourceStatuses().some((s) => s.name === 'store' && s.reason?.includes('cannot be read')), {
        message: 'the store failing',
      });
      expect(await service.pools()).toMatchObject({ complete: false, pools: [] });
      const notReady = await readyz(service);
      expect(notReady.status).toBe(503);
      expect(notReady.message).toMatch(/kubernetes: listing EndpointSlices failed: HTTP 500/);
      expect(notReady.message).toMatch(/store cannot be read/);
      // The store cannot be read: /healthz says so, also before its first read (docs/contract.md §5).
      expect((await fetch(`${service.url}/healthz`)).status).toBe(503);
    } finally {
      redis.resume();
    }

    // The store comes back: its side is read, the lease lands (a PoolRelay retries until its client has
    // reconnected), Kubernetes is still missing.
    await eventually(() => service.heartbeat(pool));
    await waitFor(() => service.stateOf(key) === 'one-sided', { message: 'one-sided' });
    const stillIncomplete = await service.pools();
    expect(stillIncomplete).toMatchObject({ complete: false, pools: [] });
    expect(service.join.view.reasons).toEqual([expect.stringMatching(/^kubernetes: /)]);

    // Kubernetes answers after eight failed lists.
    service.backoff.release();
    await eventually(async () => expect(await service.pools()).toMatchObject({ complete: true, pools: [{ name: 'steady', state: 'live' }] }));
    expect((await readyz(service)).status).toBe(200);
    expect(fake.listRequests()).toHaveLength(9);
    // 0.8 s doubling, with up to 20 % jitter, capped at 30 s.
    expectBackoff(service.backoff.delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);

    // The list that succeeded synced the source: the next failure waits the initial delay again.
    service.fake.dropWatches();
    await waitFor(() => service.fake.watchRequests().length === 2 && service.source.stats.synced, { message: 'the re-watch' });
    expectBackoff(service.backoff.delays.slice(8), [800]);
  });

  it('while a watch is re-established, GET /pools and the stream keep the last view marked incomplete; the lease side still flows', async () => {
    const { service, stream } = await steadyService();
    service.backoff.hold();
    service.fake.failNextWatches(500, 'drop');
    service.fake.dropWatches();
    await waitFor(() => service.backoff.waiting === 1, { message: 'the first backoff' });

    expect(await service.pools()).toMatchObject({ complete: false, pools: [{ name: 'steady', state: 'live' }] });
    await waitFor(() => resyncs(stream).length === 2, { message: 'the incomplete resync' });
    expect(resyncs(stream)[1]).toMatchObject({ complete: false, pools: [{ name: 'steady', state: 'live' }] });
    expect(stream.of('delete')).toEqual([]);
    // Read in full once: still ready (readiness is not completeness).
    expect((await readyz(service)).status).toBe(200);
    // The lease side goes on meanwhile.
    await service.heartbeat(pool, { model: 'org/steady-v2' });
    await waitFor(() => stream.of('upsert').length === 1, { message: 'the model change' });
    expect((await service.pools()).complete).toBe(false);

    service.backoff.step(); // the next watch is refused (500): another backoff
    await waitFor(() => service.backoff.delays.length === 2 && service.backoff.waiting === 1, { message: 'the second backoff' });
    expect((await service.pools()).complete).toBe(false);
    service.backoff.release(); // the next is dropped, the one after that holds
    await eventually(async () => expect(await service.pools()).toMatchObject({ complete: true, pools: [{ model: 'org/steady-v2' }] }));
    await waitFor(() => resyncs(stream).at(-1)?.complete === true, { message: 'the complete resync' });
    expect(resyncs(stream).filter((r) => r.complete)).toHaveLength(2);
    expect(service.source.stats.lists).toBe(1);
    expectBackoff(service.backoff.delays, [800, 1600, 3200]);
  });

  it('the backoff starts over once the source is synced again: after an event, and after a quiet re-watch', async () => {
    const { service } = await steadyService();
    service.fake.failNextWatches(500, 500);
    service.fake.dropWatches();
    await waitFor(() => service.fake.watchRequests().length === 4 && service.source.stats.synced, { message: 'the re-watch' });
    expectBackoff(service.backoff.delays, [800, 1600, 3200]);

    // The re-watch delivers an event: recovered, the next failure waits the initial delay again.
    service.fake.add(slice({ flavour: 'mcs', ...pool, pool: 'other', role: 'relay', endpoints: [{ ip: '10.1.0.9' }] }));
    await waitFor(() => service.stateOf(poolKeyOf({ ...pool, pool: 'other' })) === 'unregistered', { message: 'the event' });
    service.fake.failNextWatches(500);
    service.fake.dropWatches();
    await waitFor(() => service.fake.watchRequests().length === 6 && service.source.stats.synced, { message: 'the next re-watch' });
    expectBackoff(service.backoff.delays, [800, 1600, 3200, 800, 1600]);

    // A quiet namespace: the re-watch delivers nothing, the source reports synced after its grace period,
    // and the watch stays up. A later failure starts over too.
    const watchOpened = Date.now();
    await waitFor(async () => (await service.pools()).complete && Date.now() - watchOpened > MIN_QUIET_WATCH_MS, {
      message: 'a watch that stayed up',
      timeoutMs: MIN_QUIET_WATCH_MS + 5000,
    });
    service.fake.dropWatches();
    await waitFor(() => service.fake.watchRequests().length === 7 && service.source.stats.synced, { message: 'the last re-watch' });
    expectBackoff(service.backoff.delays, [800, 1600, 3200, 800, 1600, 800]);
  });

  it('a watch the server ends is watched again from where it left off, the view complete throughout', async () => {
    const { service, stream } = await steadyService();
    service.fake.add(slice({ flavour: 'mcs', ...pool, pool: 'second', role: 'relay', endpoints: [{ ip: '10.1.0.2' }] }));
    await waitFor(() => service.stateOf(poolKeyOf({ ...pool, pool: 'second' })) === 'unregistered', { message: 'the event' });
    const resumeFrom = service.fake.currentResourceVersion;

    service.fake.endWatches();
    await waitFor(() => service.fake.watchRequests().length === 2 && service.fake.openWatches === 1, { message: 'the re-watch' });
    expect(service.fake.watchRequests()[1]?.query).toMatchObject({ resourceVersion: resumeFrom, allowWatchBookmarks: 'true' });
    // Events after the re-watch reach the join.
    service.fake.add(slice({ flavour: 'mcs', ...pool, pool: 'third', role: 'relay', endpoints: [{ ip: '10.1.0.3' }] }));
    await waitFor(() => service.stateOf(poolKeyOf({ ...pool, pool: 'third' })) === 'unregistered', { message: 'the later event' });
    expect(service.backoff.delays).toEqual([]);
    expect(resyncs(stream)).toHaveLength(1);
    expect((await service.pools()).complete).toBe(true);
    expect(service.source.stats.lists).toBe(1);
  });

  it('while Redis cannot be read, the last view stays, marked incomplete, and nothing lapses', async () => {
    const { service, stream } = await steadyService();
    redis.pause();
    try {
      await waitFor(async () => !(await service.pools()).complete, { message: 'incomplete', timeoutMs: 5000 });
      expect(await listedNames(service)).toEqual([key]);
      expect((await fetch(`${service.url}/healthz`)).status).toBe(503);
      expect(resyncs(stream).at(-1)).toMatchObject({ complete: false, pools: [{ name: 'steady' }] });
    } finally {
      redis.resume();
    }
    await eventually(async () => expect(await service.pools()).toMatchObject({ complete: true, pools: [{ name: 'steady', state: 'live' }] }));
    expect(stream.of('delete')).toEqual([]);
    expect(service.stateOf(key)).toBe('live');
  });
});
