// /healthz, /readyz, /debug/pools, unknown routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../src/contract/index.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError, type RegistrationStore } from '../../src/store/types.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

describe('operations routes', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 300, join: { sweepIntervalMs: 25 }, socket: false });
  });
  afterAll(() => svc.stop());

  it('healthz answers 200 and readyz 200 once the store was read', async () => {
    expect((await svc.app.request('/healthz')).status).toBe(200);
    await waitFor(async () => (await svc.app.request('/readyz')).status === 200, { message: 'ready' });
  });

  it('debug/pools shows a pool with its live → lapsed history, and one pool by key', async () => {
    await postJson(svc.app, registration({ name: 'debugged' }));
    const pool = await waitFor(async () => {
      const body = (await (await svc.app.request('/debug/pools/us-east-1/llm/debugged')).json()) as {
        state: string;
        history: { event: string; from: string; to: string; at: string }[];
      };
      return body.state === 'lapsed' && body;
    }, { timeoutMs: 6000, message: 'lapsed in /debug/pools' });
    expect(pool.history.map((h) => [h.event, h.from, h.to])).toEqual([
      ['LEASE_UPSERT', 'absent', 'live'],
      ['LEASE_LAPSED', 'live', 'lapsed'],
    ]);
    expect(Number.isNaN(Date.parse(pool.history[0]!.at))).toBe(false);
    const all = (await (await svc.app.request('/debug/pools')).json()) as { pools: { pool: string }[] };
    expect(all.pools.map((p) => p.pool)).toContain('us-east-1/llm/debugged');
    const missing = await svc.app.request('/debug/pools/x/y/z');
    expect(missing.status).toBe(404);
    expect(errorBodySchema.parse(await missing.json()).error.code).toBe('not_found');
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    const response = await svc.app.request('/nothing-here');
    expect(response.status).toBe(404);
    expect(errorBodySchema.parse(await response.json()).error.code).toBe('not_found');
  });
});

describe('operations routes while the store cannot be read', () => {
  it('livez answers 200 while healthz and readyz answer 503: it depends on no store', async () => {
    const inner = createMemoryStore({ leaseMs: 300 });
    const store: RegistrationStore = {
      kind: inner.kind,
      forgetsOnRestart: inner.forgetsOnRestart,
      heartbeat: (r) => inner.heartbeat(r),
      snapshot: async () => {
        throw new StoreUnavailableError('store frozen');
      },
      watch: (position, signal, epoch, reached) => inner.watch(position, signal, epoch, reached),
      dueLapses: (graceMs) => inner.dueLapses(graceMs),
      sweep: () => inner.sweep(),
      close: () => inner.close(),
    };
    const svc = await startService({ store, leaseMs: 300, socket: false });
    try {
      expect((await svc.app.request('/healthz')).status).toBe(503);
      expect((await svc.app.request('/readyz')).status).toBe(503);
      const live = await svc.app.request('/livez');
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
    } finally {
      await svc.stop();
    }
  });

  it('healthz answers 503 naming the store after it was readable once; readyz stays 503 before the first read', async () => {
    const inner = createMemoryStore({ leaseMs: 300 });
    let broken = false;
    let snapshots = 0;
    const store: RegistrationStore = {
      kind: inner.kind,
      forgetsOnRestart: inner.forgetsOnRestart,
      heartbeat: (r) => inner.heartbeat(r),
      snapshot: async () => {
        snapshots += 1;
        if (broken) throw new StoreUnavailableError('redis at 127.0.0.1:1 does not answer');
        return inner.snapshot();
      },
      async *watch(position, signal, epoch, reached) {
        // Broken: a resume of the log fails as the snapshot does.
        if (broken) throw new StoreUnavailableError('redis at 127.0.0.1:1 does not answer');
        for await (const event of inner.watch(position, signal, epoch, reached)) {
          if (broken) throw new StoreUnavailableError('redis at 127.0.0.1:1 does not answer');
          yield event;
        }
      },
      sweep: () => inner.sweep(),
    dueLapses: (graceMs) => inner.dueLapses(graceMs),
      close: () => inner.close(),
    };
    const svc = await startService({ store, leaseMs: 300, socket: false });
    try {
      await waitFor(async () => (await svc.app.request('/readyz')).status === 200);
      broken = true;
      // Wake the watch so it notices (a real store's watch fails by itself).
      await inner.heartbeat({ cluster_id: 'c', namespace: 'n', name: 'x', model: 'm', capabilities: [], capacity: [], location: {}, frontends: [] });
      const response = await waitFor(async () => {
        const r = await svc.app.request('/healthz');
        return r.status === 503 && r;
      });
      const { error } = errorBodySchema.parse(await response.json());
      expect(error.code).toBe('store_unavailable');
      expect(error.message).toMatch(/store cannot be read/);
      expect(snapshots).toBeGreaterThanOrEqual(1);
    } finally {
      await svc.stop();
    }
  });
});
