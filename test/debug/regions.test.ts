// /debug with regions (docs/contract.md §7): each pool's live leases by region and which one's
// registration is shown, the regions entries of GET /pools on GET /debug/pools, and the feed's regions
// and fleet overview (a pool counted once per region holding a lease for it, else in "no lease"), as a
// followed region is cut off, held, dropped and read again. The overview's counting is checked on its
// own first, edge case by edge case.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initialContext, type PoolContext, type RegionLease } from '../../machines/pool.machine.js';
import type { PoolList, Registration } from '../../src/contract/index.js';
import { describeLeases, type DebugPool, type DebugPoolList } from '../../src/debug/describe.js';
import { fleetOverview } from '../../src/debug/overview.js';
import type { DebugPoolDetail, DebugRegion, DebugStreamEvents, FleetOverview, OverviewRow } from '../../src/debug/types.js';
import { debugPoolListSchema, debugPoolSummarySchema } from '../../src/openapi/debug-schemas.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { postJson, request } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { repeatEvery, waitFor } from '../support/wait.js';

/** A pool's context as the machine starts it (mcs mode, created at 0), with a live lease when it holds any. */
function context(overrides: Partial<PoolContext> & Pick<PoolContext, 'key' | 'state'>): PoolContext {
  const lease = Object.keys(overrides.leases ?? {}).length > 0 ? 'live' : 'none';
  return { ...initialContext({ key: overrides.key, mode: 'mcs', leaseMs: 1000, at: 0 }), lease, ...overrides };
}

const lease = (model: string, changedAtMs: number, version = 1): RegionLease => ({
  registration: registration({ model }),
  version,
  changedAtMs,
  deadlineMs: changedAtMs + 1000,
  receipt: 0,
});

const row = (region: string | null, counts: Partial<OverviewRow['counts']> = {}): OverviewRow => {
  const all = { live: 0, frontendless: 0, 'one-sided': 0, unregistered: 0, lapsed: 0, ...counts };
  return { region, counts: all, total: Object.values(all).reduce((a, b) => a + b, 0) };
};

describe('the fleet overview', () => {
  const pools = [
    // Failed over: live leases in r1 and r2, counted in both.
    context({ key: 'c/ns/a', state: 'live', leases: { r1: lease('m1', 1), r2: lease('m1', 2) }, registration: registration({ model: 'm1' }) }),
    context({ key: 'c/ns/b', state: 'frontendless', leases: { r2: lease('m1', 1) }, registration: registration({ model: 'm1' }) }),
    context({ key: 'c/ns/c', state: 'one-sided', leases: { r1: lease('m2', 1) }, registration: registration({ model: 'm2' }) }),
    // No live lease: the no-lease row; a lapsed pool keeps its last model, an unregistered one has none.
    context({ key: 'c/ns/d', state: 'lapsed', lease: 'lapsed', registration: registration({ model: 'm2' }) }),
    context({ key: 'c/ns/e', state: 'unregistered', relays: ['10.0.0.1:9000'] }),
    // A pool that left is kept for /debug only: not counted.
    context({ key: 'c/ns/f', state: 'absent', registration: registration({ model: 'm3' }) }),
  ];

  it('with regions: once per region holding a live lease, else "no lease"; every configured region listed', () => {
    const overview = fleetOverview(pools, { regions: ['r1', 'r2', 'r3'] });
    expect(overview.by_region).toEqual([
      row('r1', { live: 1, 'one-sided': 1 }),
      row('r2', { live: 1, frontendless: 1 }),
      row('r3'),
      row(null, { lapsed: 1, unregistered: 1 }),
    ]);
    expect(overview.by_model).toEqual([
      { model: 'm1', rows: [row('r1', { live: 1 }), row('r2', { live: 1, frontendless: 1 })] },
      { model: 'm2', rows: [row('r1', { 'one-sided': 1 }), row(null, { lapsed: 1 })] },
      { model: null, rows: [row(null, { unregistered: 1 })] },
    ]);
  });

  it('without regions: one row counting every pool once', () => {
    const single = pools.map((p): PoolContext => ({ ...p, leases: Object.keys(p.leases).length > 0 ? { '': lease('x', 1) } : {} }));
    const overview = fleetOverview(single);
    expect(overview.by_region).toEqual([row('', { live: 1, frontendless: 1, 'one-sided': 1, lapsed: 1, unregistered: 1 })]);
    expect(overview.by_model.map((m) => [m.model, m.rows])).toEqual([
      ['m1', [row('', { live: 1, frontendless: 1 })]],
      ['m2', [row('', { 'one-sided': 1, lapsed: 1 })]],
      [null, [row('', { unregistered: 1 })]],
    ]);
  });

  it('with no pools: the regions with zero counts, and no models', () => {
    expect(fleetOverview([], { regions: ['r1'] })).toEqual({ by_region: [row('r1'), row(null)], by_model: [] });
    expect(fleetOverview([])).toEqual({ by_region: [row('')], by_model: [] });
  });

  it("marks the lease whose registration is shown: the highest version, ties to the first region's name", () => {
    const leases = (l: Record<string, RegionLease>) =>
      describeLeases(context({ key: 'c/ns/a', state: 'live', leases: l })).map((x) => `${x.region}:${x.shown}`);
    expect(leases({ r2: lease('m', 5, 2), r1: lease('m', 3, 1) })).toEqual(['r1:false', 'r2:true']);
    // Versions decide, not the regions' change times (their clocks differ).
    expect(leases({ r2: lease('m', 3, 2), r1: lease('m', 5, 1) })).toEqual(['r1:false', 'r2:true']);
    expect(leases({ r2: lease('m', 5), r1: lease('m', 5), r3: lease('m', 5) })).toEqual(['r1:true', 'r2:false', 'r3:false']);
    expect(leases({})).toEqual([]);
  });
});

const LEASE_MS = 1000;
const HOLD_MS = 1500;
const A = 'us-east-1/llm/llama-70b';
const B = 'eu-west-1/llm/mixtral-8x7b';
const MODEL_A = 'meta-llama/Llama-3.1-70B-Instruct';
const MODEL_B = 'mistralai/Mixtral-8x7B-Instruct-v0.1';

describe('/debug with two regions', () => {
  let svc: TestService;
  let r2: DelegatingStore;
  let beats: { stop(): Promise<void> } | undefined;
  let sse: SseReader;

  // A failed over to r2 with a changed registration (r2's is shown); B lives in r2 only.
  const inR1 = registration({ cluster_id: 'us-east-1', name: 'llama-70b', model: MODEL_A });
  const inR2: Registration = { ...inR1, frontends: ['http://10.9.0.7:8000'], relay: 'http://10.9.0.9:9000' };
  const onlyInR2 = registration({ cluster_id: 'eu-west-1', name: 'mixtral-8x7b', model: MODEL_B });

  beforeAll(async () => {
    r2 = new DelegatingStore(createMemoryStore({ leaseMs: LEASE_MS }), { forgetsOnRestart: false });
    svc = await startService({
      leaseMs: LEASE_MS,
      store: createMemoryStore({ leaseMs: LEASE_MS }),
      join: { regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs: HOLD_MS }, storeBackoff: { initialMs: 50, maxMs: 200 } },
    });
    // r1 first, so r2's registration is the later content change: r2's writer knew r1's version 1.
    expect((await postJson(svc.url, inR1)).status).toBe(200);
    await r2.inner.heartbeat(inR2, undefined, 1);
    await r2.inner.heartbeat(onlyInR2);
    beats = repeatEvery(LEASE_MS / 4, async () => {
      await postJson(svc.url, inR1);
      await r2.inner.heartbeat(inR2, undefined, 1);
      await r2.inner.heartbeat(onlyInR2);
    });
    sse = await SseReader.open(`${svc.url}/debug/pools/watch`);
  });
  afterAll(async () => {
    await sse?.close();
    await beats?.stop();
    await svc?.stop();
  });

  const debugPools = async (): Promise<DebugPoolList> => (await (await request(svc.url, '/debug/pools')).json()) as DebugPoolList;
  const pool = (list: DebugPoolList, key: string): DebugPool => list.pools.find((p) => p.pool === key)!;
  const snapshot = () => sse.of('snapshot')[0]!.data as DebugStreamEvents['snapshot'];
  const overview = (): FleetOverview =>
    (sse.of('overview').at(-1)?.data as DebugStreamEvents['overview'] | undefined)?.overview ?? snapshot().overview;
  const regions = (): DebugRegion[] =>
    (sse.of('regions').at(-1)?.data as DebugStreamEvents['regions'] | undefined)?.regions ?? snapshot().regions!;
  const regionStatus = (name: string) => regions().find((r) => r.name === name)?.status;
  const byRegion = () => Object.fromEntries(overview().by_region.map((r) => [r.region ?? 'no lease', r.counts]));
  /** Every summary the page got, newest first. */
  const summaries = () => [...snapshot().pools, ...sse.of('pools').flatMap((m) => (m.data as DebugStreamEvents['pools']).upserted)].reverse();

  it("lists each pool's leases by region, which one is shown, and the regions entries of GET /pools", async () => {
    const list = await waitFor(
      async () => {
        const body = await debugPools();
        return body.complete && pool(body, A)?.leases.length === 2 && pool(body, B)?.state === 'live' && body;
      },
      { timeoutMs: LEASE_MS + 5000, message: 'both regions read, the memory store warmed up' },
    );
    expect(debugPoolListSchema.strict().parse(list)).toEqual(list);
    const a = pool(list, A);
    expect(a.leases.map(({ region, shown }) => ({ region, shown }))).toEqual([
      { region: 'r1', shown: false },
      { region: 'r2', shown: true },
    ]);
    expect(a.leases.map((l) => l.version)).toEqual([1, 2]);
    expect(a.leases[1]!.changed_at_ms).toBeGreaterThan(a.leases[0]!.changed_at_ms);
    for (const l of a.leases) expect(l.deadline_ms).toBeGreaterThan(l.changed_at_ms);
    expect(a.registration).toEqual(inR2);
    expect(a.frontends).toEqual(['http://10.9.0.7:8000']);
    expect(pool(list, B).leases.map((l) => [l.region, l.shown])).toEqual([['r2', true]]);

    const pools = (await (await request(svc.url, '/pools')).json()) as PoolList;
    expect(list.regions).toEqual([
      { name: 'r1', complete: true, dropped: false },
      { name: 'r2', complete: true, dropped: false },
    ]);
    expect(list.regions).toEqual(pools.regions);
    // One pool by path carries the same leases.
    expect(((await (await request(svc.url, `/debug/pools/${A}`)).json()) as DebugPool).leases).toEqual(a.leases);
    // The page's list names the regions too.
    const summary = (await waitFor(() => summaries().find((s) => s.pool === A && s.lease_regions.length === 2), { message: 'summary of A' }))!;
    expect(debugPoolSummarySchema.strict().parse(summary)).toEqual(summary);
    expect(summary.lease_regions).toEqual(['r1', 'r2']);
  });

  it('counts A in both regions and B in r2, live', async () => {
    expect(snapshot().regions?.map((r) => r.name)).toEqual(['r1', 'r2']);
    await waitFor(() => byRegion().r2?.live === 2 && byRegion(), { message: 'overview with both pools' });
    expect(overview().by_region).toEqual([row('r1', { live: 1 }), row('r2', { live: 2 }), row(null)]);
    expect(overview().by_model).toEqual([
      { model: MODEL_A, rows: [row('r1', { live: 1 }), row('r2', { live: 1 })] },
      { model: MODEL_B, rows: [row('r2', { live: 1 })] },
    ]);
    await waitFor(() => regionStatus('r2') === 'reading', { message: 'r2 reading' });
    expect(regions().find((r) => r.name === 'r1')).toMatchObject({ home: true, status: 'reading', unreachable_since_ms: null });
  });

  it('holds a cut-off region, then drops it: its leases leave, its pools no other region holds lapse', async () => {
    const cutAt = Date.now();
    r2.setCut(true, new StoreUnavailableError('cut off by the test'));
    const held = await waitFor(() => regions().find((r) => r.name === 'r2' && r.status === 'unreachable'), { message: 'r2 unreachable' });
    expect(held.home).toBe(false);
    expect(held.unreachable_since_ms).toBeGreaterThanOrEqual(cutAt - 50);
    expect(held.reason).toContain('cut off by the test');
    // Held: its pools stay, counted as before.
    const during = await debugPools();
    expect(during.regions?.find((r) => r.name === 'r2')).toMatchObject({ complete: false, dropped: false });
    expect(pool(during, A).leases.map((l) => l.region)).toEqual(['r1', 'r2']);
    expect(byRegion().r2?.live).toBe(2);

    await waitFor(() => regionStatus('r2') === 'dropped', { timeoutMs: HOLD_MS + 3000, message: 'r2 dropped' });
    const after = await waitFor(
      async () => {
        const body = await debugPools();
        return pool(body, B).state === 'lapsed' && body;
      },
      { message: 'B lapsed' },
    );
    expect(after.regions?.find((r) => r.name === 'r2')).toMatchObject({ complete: false, dropped: true });
    expect(pool(after, A).leases.map((l) => [l.region, l.shown])).toEqual([['r1', true]]);
    expect(pool(after, A).registration).toEqual(inR1);
    expect(pool(after, B).leases).toEqual([]);
    expect(pool(after, B).history.at(-1)).toMatchObject({ from: 'live', to: 'lapsed', event: 'REGION_DROPPED' });
    const detail = (await (await request(svc.url, `/debug/pools/${encodeURIComponent(B)}`)).json()) as DebugPoolDetail;
    expect(detail.history.at(-1)!.cause).toMatchObject({ guard: 'isLapsed' });
    expect(detail.history.at(-1)!.cause.detail).toContain('region r2 could not be read for longer than the hold');
    expect(detail.history.find((h) => h.event === 'LEASE_UPSERT')!.cause.detail).toContain("region r2's store logged a new or changed registration");
    await waitFor(() => byRegion()['no lease']?.lapsed === 1, { message: 'overview after the drop' });
    expect(overview().by_region).toEqual([row('r1', { live: 1 }), row('r2'), row(null, { lapsed: 1 })]);
    expect(overview().by_model).toEqual([
      { model: MODEL_A, rows: [row('r1', { live: 1 })] },
      { model: MODEL_B, rows: [row(null, { lapsed: 1 })] },
    ]);
  });

  it('takes the region back once it can be read again', async () => {
    r2.setCut(false);
    await waitFor(() => regionStatus('r2') === 'reading', { timeoutMs: 5000, message: 'r2 read again' });
    await waitFor(() => byRegion().r2?.live === 2, { timeoutMs: 5000, message: 'overview with r2 back' });
    const list = await debugPools();
    expect(list.regions?.find((r) => r.name === 'r2')).toEqual({ name: 'r2', complete: true, dropped: false });
    expect(pool(list, A).leases.map((l) => l.region)).toEqual(['r1', 'r2']);
  });
});

describe('/debug without regions', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 2000 });
  });
  afterAll(() => svc?.stop());

  it("carries no regions, and each pool's one lease in region ''", async () => {
    expect((await postJson(svc.url, registration())).status).toBe(200);
    const list = await waitFor(
      async () => {
        const body = (await (await request(svc.url, '/debug/pools')).json()) as DebugPoolList;
        return body.pools.length === 1 && body;
      },
      { message: 'the pool' },
    );
    expect(list).not.toHaveProperty('regions');
    expect(debugPoolListSchema.strict().parse(list)).toEqual(list);
    expect(list.pools[0]!.leases).toEqual([expect.objectContaining({ region: '', shown: true })]);
    const sse = await SseReader.open(`${svc.url}/debug/pools/watch`);
    try {
      const first = await waitFor(() => sse.of('snapshot')[0]?.data as DebugStreamEvents['snapshot'] | undefined, { message: 'snapshot' });
      expect(first.regions).toBeNull();
      expect(first.overview.by_region).toEqual([row('', { live: 1 })]);
      expect(first.pools[0]!.lease_regions).toEqual(['']);
    } finally {
      await sse.close();
    }
  });
});
