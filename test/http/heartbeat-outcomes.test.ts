// How the heartbeat route (src/http/heartbeat.ts, heartbeatHandler) counts each outcome, request by
// request, and that counting is optional: a route built without a counter answers the same. The counts
// are what poolscope_heartbeats_total{outcome} exports (test/metrics/metrics.test.ts reads them there).
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { heartbeatHandler, type HeartbeatDeps } from '../../src/http/heartbeat.js';
import type { WriteAuthority } from '../../src/http/write-authority.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError } from '../../src/store/types.js';
import { withApiErrors } from '../support/api-errors.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';

function route(deps: Partial<HeartbeatDeps> = {}) {
  const store = deps.store ?? createMemoryStore({ leaseMs: 15_000 });
  return { store, app: withApiErrors(new Hono().post('/pools', heartbeatHandler({ store, leaseMs: 15_000, heartbeatIntervalMs: 5000, ...deps }))) };
}

const post = (app: Hono, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  app.request('/pools', { method: 'POST', headers, body });

/** Each refusal before the store: its request, the status, the code, and what the message must say to be fixed. */
const REFUSALS: Array<[string, Record<string, string>, string, number, string, RegExp]> = [
  ['a type that is not JSON', { 'content-type': 'text/plain' }, JSON.stringify(registration()), 415, 'unsupported_media_type', /must be JSON \(Content-Type: application\/json\)/],
  ['a Content-Encoding', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, JSON.stringify(registration()), 415, 'unsupported_media_type', /must not be encoded \(no Content-Encoding/],
  ['malformed JSON', { 'content-type': 'application/json' }, '{"cluster_id": ', 400, 'invalid_json', /^the body is not valid JSON: ./],
  ['a field broken', { 'content-type': 'application/json' }, JSON.stringify(registration({ name: 'UPPER' })), 400, 'invalid_field', /./],
];

describe('heartbeat outcomes', () => {
  it.each(REFUSALS)('%s: counted as invalid, nothing stored', async (_what, headers, body, status, code, says) => {
    const outcomes: string[] = [];
    const { app, store } = route({ onOutcome: (o) => outcomes.push(o) });
    const response = await post(app, body, headers);
    expect(response.status).toBe(status);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe(code);
    expect(error.message).toMatch(says);
    expect(outcomes).toEqual(['invalid']);
    expect((await store.snapshot()).records).toEqual([]);
  });

  it.each(REFUSALS)('%s: the same answer from a route without a counter', async (_what, headers, body, status, code) => {
    const response = await post(route().app, body, headers);
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
  });

  it('a store that cannot be reached: 503 store_unavailable, counted as unavailable; the same without a counter', async () => {
    const failing = () => {
      const store = new DelegatingStore(createMemoryStore({ leaseMs: 15_000 }));
      store.heartbeat = async () => {
        throw new StoreUnavailableError('redis store: heartbeat failed: Command timed out');
      };
      return store;
    };
    const outcomes: string[] = [];
    for (const app of [route({ store: failing(), onOutcome: (o) => outcomes.push(o) }).app, route({ store: failing() }).app]) {
      const response = await post(app, JSON.stringify(registration()));
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        error: { code: 'store_unavailable', message: 'the registration store cannot be reached: redis store: heartbeat failed: Command timed out' },
      });
    }
    expect(outcomes).toEqual(['unavailable']);
  });

  it('a heartbeat stored: counted as ok', async () => {
    const outcomes: string[] = [];
    const { app, store } = route({ onOutcome: (o) => outcomes.push(o) });
    expect((await post(app, JSON.stringify(registration()))).status).toBe(200);
    expect(outcomes).toEqual(['ok']);
    expect((await store.snapshot()).records.map((r) => r.key)).toEqual(['us-east-1/llm/llama-70b']);
  });

  it('a write outside the credentials\' scopes: 403 forbidden, counted as forbidden, nothing stored; the same without a counter', async () => {
    // The scopes' own rules are write-authority.ts's (test/http/write-authority.test.ts); here, a refusal.
    const writes = {
      authorize: () => {
        throw new ApiError(403, 'forbidden', 'this credential may not write us-east-1/llm');
      },
    } as unknown as WriteAuthority;
    const outcomes: string[] = [];
    for (const { app, store } of [route({ writes, onOutcome: (o) => outcomes.push(o) }), route({ writes })]) {
      const response = await post(app, JSON.stringify(registration()));
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: { code: 'forbidden', message: 'this credential may not write us-east-1/llm' } });
      expect((await store.snapshot()).records).toEqual([]);
    }
    expect(outcomes).toEqual(['forbidden']);
  });

  it('a body whose read fails (the client left): 400 invalid_json, counted as aborted with one debug line; the same without a counter or a logger', async () => {
    const cutShort = () =>
      new Request('http://poolscope/pools', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"cluster_id":'));
            controller.error(new Error('socket hang up'));
          },
        }),
        duplex: 'half',
      } as RequestInit);
    const logs = captureLogs('debug');
    const outcomes: string[] = [];
    for (const { app, store } of [route({ onOutcome: (o) => outcomes.push(o), logger: logs.logger }), route()]) {
      const response = await app.request(cutShort());
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: { code: 'invalid_json', message: 'the body ended before it was complete' } });
      expect((await store.snapshot()).records).toEqual([]);
    }
    expect(outcomes).toEqual(['aborted']);
    expect(logs.lines).toEqual([expect.objectContaining({ level: 20, msg: 'request body aborted by the client', method: 'POST', path: '/pools', reason: 'socket hang up' })]);
  });
});
