// POST /routers, GET /routers and /routers/watch on one replica (memory store, no socket): the checks of
// POST /pools with their error bodies, nothing stored by a refusal, the list with its revision, ETag/304
// and encodings, ?region=, tokens (write, read, the `routers` scope), and the watch stream's events.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { stopAfterEach } from '../support/cleanup.js';
import { request } from '../support/http.js';
import { listRouters, postRouter } from './support.js';
import { startService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

const LEASE_MS = 600;

const router = (id: string, more: Record<string, unknown> = {}) => ({ id, url: `http://10.0.1.${id.length}:9100`, ...more });

describe('router registrations on one replica', () => {
  const stopLater = stopAfterEach();

  const start = (options: Parameters<typeof startService>[0] = {}) => startService({ socket: false, leaseMs: LEASE_MS, ...options }).then(stopLater);

  it('lists a registered router with its fields, sorted by id, and lapses it when its heartbeats stop', async () => {
    const service = await start();
    const reply = await postRouter(service.app, router('gr-b', { region: 'us-east-1', zone: 'us-east-1a' }));
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ router: 'gr-b', lease_ms: LEASE_MS, heartbeat_interval_ms: Math.floor(LEASE_MS / 3) });
    expect((await postRouter(service.app, router('gr-a'))).status).toBe(200);
    const list = await waitFor(async () => {
      const body = await listRouters(service.app);
      return body.routers.length === 2 && body;
    });
    expect(list.routers).toEqual([
      { id: 'gr-a', url: 'http://10.0.1.4:9100', source: 'registration' },
      { id: 'gr-b', url: 'http://10.0.1.4:9100', region: 'us-east-1', zone: 'us-east-1a', source: 'registration' },
    ]);
    // No heartbeat since: both lapse once the lease has run out.
    await waitFor(async () => (await listRouters(service.app)).routers.length === 0, { timeoutMs: LEASE_MS * 4, message: 'routers lapsed' });
  });

  it.each([
    ['not JSON', '{"id":', 400, 'invalid_json', undefined],
    ['an id that is no DNS-1123 label', { id: 'GR_1', url: 'http://10.0.0.1:1' }, 400, 'invalid_field', 'id'],
    ['an id with a dot (a subdomain, not a label)', { id: 'gr.1', url: 'http://10.0.0.1:1' }, 400, 'invalid_field', 'id'],
    ['a url without a host', { id: 'gr-1', url: 'http://' }, 400, 'invalid_field', 'url'],
    ['a url of another scheme', { id: 'gr-1', url: 'ftp://10.0.0.1' }, 400, 'invalid_field', 'url'],
    ['an unknown key', { id: 'gr-1', url: 'http://10.0.0.1:1', weight: 3 }, 400, 'unknown_field', 'weight'],
    ['no url', { id: 'gr-1' }, 400, 'invalid_field', 'url'],
  ])('refuses %s with the contract error body, storing nothing', async (_what, body, status, code, field) => {
    const service = await start();
    const reply = await postRouter(service.app, body);
    expect(reply.status).toBe(status);
    const error = ((await reply.json()) as { error: { code: string; field?: string; message: string } }).error;
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
    expect(error.message.length).toBeGreaterThan(0);
    expect((await service.routerStore.snapshot()).records).toEqual([]);
  });

  it('refuses a content type other than JSON (415) and a body over 64 KiB (413)', async () => {
    const service = await start();
    const text = await postRouter(service.app, JSON.stringify(router('gr-1')), { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const large = await postRouter(service.app, JSON.stringify({ ...router('gr-1'), zone: 'z'.repeat(70_000) }));
    expect(large.status).toBe(413);
    expect((await service.routerStore.snapshot()).records).toEqual([]);
  });

  it('answers 304 to the current ETag, a new tag after a change, gzip when asked, and filters by ?region=', async () => {
    const service = await start({ leaseMs: 30_000 });
    await postRouter(service.app, router('gr-1', { region: 'eu-west-1' }));
    await postRouter(service.app, router('gr-2', { region: 'us-east-1' }));
    await waitFor(async () => (await listRouters(service.app)).routers.length === 2);
    const first = await request(service.app, '/routers');
    const tag = first.headers.get('etag')!;
    expect(tag).toMatch(/^"/);
    expect((await request(service.app, '/routers', { headers: { 'if-none-match': tag } })).status).toBe(304);
    const gzipped = await request(service.app, '/routers', { headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(JSON.parse(gunzipSync(Buffer.from(await gzipped.arrayBuffer())).toString())).toEqual(await first.json());
    expect((await listRouters(service.app, '?region=eu-west-1')).routers.map((r) => r.id)).toEqual(['gr-1']);
    await postRouter(service.app, router('gr-3'));
    await waitFor(async () => (await listRouters(service.app)).routers.length === 3);
    expect((await request(service.app, '/routers', { headers: { 'if-none-match': tag } })).status).toBe(200);
  });

  it('takes a write token for POST /routers; a token scoped to pools only gets 403, one with the routers scope writes', async () => {
    const service = await start({
      authTokens: ['w-all', 'w-pools us-east-1', 'w-routers routers'],
      readTokens: ['r-only'],
    });
    const as = (token: string | undefined) => postRouter(service.app, router('gr-1'), token ? { authorization: `Bearer ${token}` } : {});
    expect((await as(undefined)).status).toBe(401);
    const readOnly = await as('r-only');
    expect(readOnly.status).toBe(403);
    expect(((await readOnly.json()) as { error: { code: string } }).error.code).toBe('insufficient_scope');
    const scopedToPools = await as('w-pools');
    expect(scopedToPools.status).toBe(403);
    expect(((await scopedToPools.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'forbidden' });
    expect((await service.routerStore.snapshot()).records).toEqual([]);
    expect((await as('w-routers')).status).toBe(200);
    expect((await as('w-all')).status).toBe(200);
    // Reads need a read (or write) token.
    expect((await request(service.app, '/routers')).status).toBe(401);
    expect((await request(service.app, '/routers', { headers: { authorization: 'Bearer r-only' } })).status).toBe(200);
  });

  it('streams resync, then upsert and delete with ids, and resumes from a Last-Event-ID', async () => {
    const service = await start({ leaseMs: 30_000 });
    const stream = await SseReader.open(service.app, '/routers/watch');
    try {
      await waitFor(() => stream.of('resync').length > 0);
      await postRouter(service.app, router('gr-1'));
      const upsert = await waitFor(() => stream.of('upsert')[0]);
      expect(upsert.data).toMatchObject({ router: { id: 'gr-1', source: 'registration' } });
      expect(upsert.id).toBe((upsert.data as { revision: string }).revision);
      await postRouter(service.app, router('gr-2'));
      await waitFor(() => stream.of('upsert').length === 2);
      const resumed = await SseReader.open(service.app, '/routers/watch', upsert.id);
      try {
        const next = await waitFor(() => resumed.of('upsert')[0]);
        expect(next.data).toMatchObject({ router: { id: 'gr-2' } });
        expect(resumed.of('resync')).toEqual([]);
      } finally {
        await resumed.close();
      }
    } finally {
      await stream.close();
    }
  });

  it('shows them on /debug/routers by region and source, and counts them in poolscope_routers{source,region}', async () => {
    const service = await start({ leaseMs: 30_000, staticRouters: [{ id: 'gr-s', url: 'http://10.0.9.9:1' }] });
    await postRouter(service.app, router('gr-e1', { region: 'us-east-1' }));
    await postRouter(service.app, router('gr-e2', { region: 'us-east-1' }));
    await postRouter(service.app, router('gr-w1', { region: 'eu-west-1' }));
    await waitFor(async () => (await listRouters(service.app)).routers.length === 4);
    const debug = (await (await request(service.app, '/debug/routers')).json()) as {
      regions: { region: string; sources: { source: string; routers: { id: string }[] }[] }[];
    };
    expect(debug.regions.map((r) => [r.region, r.sources.map((s) => [s.source, s.routers.map((x) => x.id)])])).toEqual([
      ['', [['static', ['gr-s']]]],
      ['eu-west-1', [['registration', ['gr-w1']]]],
      ['us-east-1', [['registration', ['gr-e1', 'gr-e2']]]],
    ]);
    const metrics = await (await request(service.app, '/metrics')).text();
    expect(metrics).toContain('poolscope_routers{source="registration",region="us-east-1"} 2');
    expect(metrics).toContain('poolscope_routers{source="registration",region="eu-west-1"} 1');
    expect(metrics).toContain('poolscope_routers{source="static",region=""} 1');
  });
});
