// What /healthz and /readyz answer for each state of the join (docs/operations.md "Probes"), one state at a
// time (test/support/probes.ts: the join's getters set by the test, the routes the service's own).
// test/http/ops.test.ts drives the same routes over a real join and store.
import type { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../src/contract/index.js';
import { probes } from '../support/probes.js';

async function answer(app: Hono, path: string): Promise<{ status: number; body: unknown }> {
  const response = await app.request(path);
  return { status: response.status, body: await response.json() };
}

async function refusal(app: Hono, path: string): Promise<{ status: number; code: string; message: string }> {
  const response = await app.request(path);
  const { error } = errorBodySchema.parse(await response.json());
  return { status: response.status, code: error.code, message: error.message };
}

describe('/healthz', () => {
  it('answers ok, without a store field before any outage of the store was recorded', async () => {
    expect(await answer(probes({}), '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('answers ok with the store’s last outage and whether its renewal window is open, once there was one', async () => {
    const window = { last_outage_ended: '2026-12-02T15:00:00.000Z', renewal_window_open: true };
    expect(await answer(probes({ homeWindow: window }), '/healthz')).toEqual({ status: 200, body: { status: 'ok', store: window } });
  });

  it('answers 503 store_unavailable with the store’s reason, or a generic one when it gives none', async () => {
    const named = probes({ storeReadable: { ok: false, reason: 'store: redis at 127.0.0.1:1 does not answer' }, sourceDown: 'kubernetes: x' });
    expect(await refusal(named, '/healthz')).toEqual({ status: 503, code: 'store_unavailable', message: 'store: redis at 127.0.0.1:1 does not answer' });
    expect(await refusal(probes({ storeReadable: { ok: false } }), '/healthz')).toEqual({
      status: 503,
      code: 'store_unavailable',
      message: 'the store cannot be read',
    });
  });

  it('answers 503 source_down naming the source whose loop failed, while the store reads', async () => {
    const app = probes({ sourceDown: 'kubernetes: watch failed: socket hang up' });
    expect(await refusal(app, '/healthz')).toEqual({ status: 503, code: 'source_down', message: 'kubernetes: watch failed: socket hang up' });
  });
});

describe('/readyz', () => {
  it('answers ready once every source it waits for was read in full', async () => {
    expect(await answer(probes({ ready: true }), '/readyz')).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('answers 503 not_ready naming each source it waits for that is not synced, by its reason or else its name', async () => {
    const app = probes({
      ready: false,
      readinessSources: ['store', 'kubernetes'],
      sourceStatuses: [
        { name: 'store', synced: false, reason: 'store: not read yet' },
        { name: 'kubernetes', synced: false },
        // Not waited for: a followed region never holds readiness back.
        { name: 'region:eu', synced: false, reason: 'region eu: cut off' },
      ],
    });
    expect(await refusal(app, '/readyz')).toEqual({ status: 503, code: 'not_ready', message: 'store: not read yet; kubernetes' });
  });

  it('leaves out the sources already synced, and says "not ready" when none is left to name', async () => {
    const one = probes({
      ready: false,
      readinessSources: ['store', 'kubernetes'],
      sourceStatuses: [
        { name: 'store', synced: true },
        { name: 'kubernetes', synced: false, reason: 'kubernetes: EndpointSlices not listed yet' },
      ],
    });
    expect(await refusal(one, '/readyz')).toEqual({ status: 503, code: 'not_ready', message: 'kubernetes: EndpointSlices not listed yet' });
    // Synced now, but not yet ever synced all at once: the join is not ready and no source is left to name.
    const none = probes({ ready: false, sourceStatuses: [{ name: 'store', synced: true }] });
    expect(await refusal(none, '/readyz')).toEqual({ status: 503, code: 'not_ready', message: 'not ready' });
  });
});

describe('/livez', () => {
  it('answers ok whatever the join says', async () => {
    const app = probes({ storeReadable: { ok: false }, sourceDown: 'kubernetes: x', ready: false });
    expect(await answer(app, '/livez')).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
