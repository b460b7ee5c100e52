// GET /pools and GET /pools/watch: the SSE stream sees resync, upsert on register, delete on lapse,
// with the same content as GET /pools, and keep-alive comments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchEventSchemas, type PoolList } from '../../src/contract/index.js';
import { listPools, postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

const LEASE_MS = 400;

describe('GET /pools/watch', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: LEASE_MS, keepAliveMs: 100, join: { sweepIntervalMs: 25 }, socket: false });
  });
  afterAll(() => svc.stop());

  const getPools = (query = ''): Promise<PoolList> => listPools(svc.app, query);

  it('streams resync first, upsert on register, delete on lapse, matching GET /pools', async () => {
    // After the memory store's one-lease warm-up, so no completeness change bumps the revision meanwhile.
    await waitFor(async () => (await getPools()).complete, { message: 'warm-up over' });
    const sse = await SseReader.open(svc.app, '/pools/watch');
    try {
      await waitFor(() => sse.messages.length >= 1, { message: 'first resync' });
      expect(sse.messages[0]!.event).toBe('resync');
      const first = watchEventSchemas.resync.parse(sse.messages[0]!.data);
      expect(sse.messages[0]!.id).toBe(first.revision);
      expect(first.pools).toEqual([]);

      expect((await postJson(svc.app, registration())).status).toBe(200);
      const upsert = await waitFor(() => sse.of('upsert')[0], { message: 'upsert' });
      const upserted = watchEventSchemas.upsert.parse(upsert.data);
      expect(upsert.id).toBe(upserted.revision);
      const listed = await getPools();
      expect(listed.pools).toEqual([upserted.pool]);
      expect(listed.revision).toBe(upserted.revision);

      // No more heartbeats: the lease lapses and the watcher gets a delete naming the pool.
      const deleted = await waitFor(() => sse.of('delete')[0], { timeoutMs: LEASE_MS + 4000, message: 'delete' });
      const del = watchEventSchemas.delete.parse(deleted.data);
      expect(del.pool).toEqual({ cluster_id: 'us-east-1', namespace: 'llm', name: 'llama-70b' });
      expect((await getPools()).pools).toEqual([]);
      expect(BigInt(del.revision.split('-')[1]!)).toBeGreaterThan(BigInt(upserted.revision.split('-')[1]!));

      // Keep-alive comment lines keep flowing.
      await waitFor(() => sse.comments >= 2, { message: 'keep-alive comments' });
    } finally {
      await sse.close();
    }
  });

  it('sends a new resync when completeness changes', async () => {
    // The memory store's warm-up (one lease after start) has passed by now, so a fresh service shows the change.
    const fresh = await startService({ leaseMs: LEASE_MS, join: { sweepIntervalMs: 25 }, socket: false });
    try {
      const sse = await SseReader.open(fresh.app, '/pools/watch');
      const resyncs = await waitFor(() => {
        const all = sse.of('resync').map((m) => watchEventSchemas.resync.parse(m.data));
        return all.some((r) => r.complete) && all;
      }, { timeoutMs: LEASE_MS + 2000, message: 'a complete resync' });
      expect(resyncs[0]!.complete).toBe(false);
      await sse.close();
    } finally {
      await fresh.stop();
    }
  });

  it('filters GET /pools by model', async () => {
    // A lease long enough that nothing lapses while the test reads.
    const long = await startService({ leaseMs: 60_000, socket: false });
    try {
      const list = (query = '') => listPools(long.app, query);
      await postJson(long.app, registration({ name: 'a', model: 'model-a' }));
      await postJson(long.app, registration({ name: 'b', model: 'model-b' }));
      await waitFor(async () => (await list()).pools.length === 2);
      expect((await list('?model=model-a')).pools.map((p) => p.name)).toEqual(['a']);
      expect((await list('?model=nothing')).pools).toEqual([]);
      expect((await list()).pools.map((p) => p.name)).toEqual(['a', 'b']);
    } finally {
      await long.stop();
    }
  });

  it('ends watch streams when the service drains', async () => {
    const fresh = await startService({ leaseMs: LEASE_MS, socket: false });
    const sse = await SseReader.open(fresh.app, '/pools/watch');
    await waitFor(() => sse.messages.length >= 1);
    await fresh.stop();
    await waitFor(() => sse.ended, { message: 'stream end' });
  });
});
