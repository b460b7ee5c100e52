// The /debug routes through app.request() (no socket): the page and its files with a same-origin-only
// policy, the chart as data, one pool by URL-encoded key, and the SSE feed following a pool from first
// heartbeat to lapse and until it is forgotten, with the causes inspection observed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolMachine } from '../../machines/pool.machine.js';
import { machineGraph } from '../../src/debug/machine-graph.js';
import type { DebugPoolDetail, DebugStreamEvents } from '../../src/debug/types.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

const LEASE_MS = 500;
const KEY = 'us-east-1/llm/llama-70b';

describe('/debug routes', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: LEASE_MS, keepAliveMs: 100, join: { retentionMs: 300 }, socket: false });
  });
  afterAll(() => svc?.stop());

  it('serves the page and its files from this origin only', async () => {
    const page = await svc.app.request('/debug');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("script-src 'self'");
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith('data:'));
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset).toMatch(/^\/debug\/assets\/[\w.-]+\.(js|css)$/);
      const response = await svc.app.request(asset);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(response.headers.get('cache-control')).toContain('immutable');
      // Nothing in the bundle names another host to fetch from.
      expect(await response.text()).not.toMatch(/(?:fetch|EventSource)\(\s*["'`]https?:/);
    }
    const missing = await svc.app.request('/debug/assets/nothing.js');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('serves the chart as read from the machine definition', async () => {
    expect(await (await svc.app.request('/debug/machine')).json()).toEqual(machineGraph(poolMachine));
  });

  it('streams a pool from its first heartbeat to its lapse, with causes, until it is forgotten', async () => {
    const sse = await SseReader.open(svc.app, `/debug/pools/watch?pool=${encodeURIComponent(KEY)}`);
    try {
      const first = await waitFor(() => sse.of('snapshot')[0], { message: 'snapshot' });
      const snapshot = first.data as DebugStreamEvents['snapshot'];
      expect(snapshot.selected).toBeNull();
      expect(typeof snapshot.now_ms).toBe('number');

      const heartbeat = () => postJson(svc.app, registration());
      expect((await heartbeat()).status).toBe(200);
      const details = () => sse.of('pool').map((m) => (m.data as DebugStreamEvents['pool']).pool);
      const detailIn = (state: string) => () => details().find((p): p is DebugPoolDetail => p?.state === state);
      const live = await waitFor(detailIn('live'), { message: 'live detail' });
      expect(live.listed).toBe(true);
      expect(live.history).toHaveLength(1);
      expect(live.history[0]).toMatchObject({ from: 'absent', to: 'live', event: 'LEASE_UPSERT' });
      expect(live.history[0]!.cause).toMatchObject({ transition: 'pool.absent|always|2', guard: 'isLive' });
      expect(live.history[0]!.cause.detail).toContain('meta-llama/Llama-3.1-70B-Instruct');
      expect(live.lease_deadline_estimate_ms).toBeGreaterThan(Date.now() - 1000);
      const summaries = () => sse.of('pools').flatMap((m) => (m.data as DebugStreamEvents['pools']).upserted);
      expect(summaries().find((s) => s.pool === KEY)).toMatchObject({ state: 'live', listed: true, model: 'meta-llama/Llama-3.1-70B-Instruct' });

      // A renewal that changes nothing is not in the store's log, yet it moves the countdown here.
      const seen = details().length;
      expect((await heartbeat()).status).toBe(200);
      const renewed = await waitFor(() => details().slice(seen).find((p) => (p?.last_heartbeat_here_ms ?? 0) > (live.last_heartbeat_here_ms ?? 0)), {
        message: 'renewal detail',
      });
      expect(renewed!.lease_deadline_estimate_ms).toBeGreaterThan(live.lease_deadline_estimate_ms!);

      // Same pool, by URL-encoded key and by path.
      const byKey = (await (await svc.app.request(`/debug/pools/${encodeURIComponent(KEY)}`)).json()) as DebugPoolDetail;
      expect(byKey.state).toBe('live');
      expect(byKey.pool).toBe(KEY);
      expect(((await (await svc.app.request(`/debug/pools/${KEY}`)).json()) as { state: string }).state).toBe('live');

      // No more heartbeats: it lapses (live → lapsed, guard isLapsed), then it is forgotten.
      const lapsed = await waitFor(detailIn('lapsed'), { timeoutMs: LEASE_MS + 3000, message: 'lapsed' });
      expect(lapsed.listed).toBe(false);
      expect(lapsed.lease_deadline_estimate_ms).toBeNull();
      expect(lapsed.history.at(-1)).toMatchObject({ from: 'live', to: 'lapsed', event: 'LEASE_LAPSED' });
      expect(lapsed.history.at(-1)!.cause).toMatchObject({ transition: 'pool.live|always|2', guard: 'isLapsed' });
      const removed = await waitFor(
        () => sse.of('pools').some((m) => (m.data as DebugStreamEvents['pools']).removed.includes(KEY)),
        { timeoutMs: 5000, message: 'forgotten' },
      );
      expect(removed).toBe(true);
      await waitFor(() => sse.of('pool').at(-1) && (sse.of('pool').at(-1)!.data as DebugStreamEvents['pool']).pool === null, { message: 'detail gone' });
      const gone = await svc.app.request(`/debug/pools/${encodeURIComponent(KEY)}`);
      expect(gone.status).toBe(404);
      expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('not_found');

      await waitFor(() => sse.comments >= 1, { message: 'keep-alive comment' });
    } finally {
      await sse.close();
    }
  });

  it('sends summaries only to a page with no pool selected', async () => {
    const sse = await SseReader.open(svc.app, '/debug/pools/watch');
    try {
      await waitFor(() => sse.of('snapshot')[0], { message: 'snapshot' });
      expect((await postJson(svc.app, registration({ name: 'other' }))).status).toBe(200);
      await waitFor(() => sse.of('pools').some((m) => (m.data as DebugStreamEvents['pools']).upserted.some((s) => s.pool === 'us-east-1/llm/other')), {
        message: 'summary',
      });
      expect(sse.of('pool')).toEqual([]);
    } finally {
      await sse.close();
    }
  });
});
