// The warnings of docs/contract.md §3, end to end: each logged once per entry into its condition, with the
// fields the contract names, at the right time (two lease durations after the entry, not before), never
// once per read, probe or event that leaves the condition as it was, and not repeated by the reads made
// before the first full sync.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { useRedis } from '../support/use-redis.js';
import { eventually, waitFor } from '../support/wait.js';
import { startMcsService, stopMcsServices, type McsService, type PoolRef } from './support/mcs-service.js';
import { joinedPoolSlices, poolKeyOf, slice } from './support/slices.js';

const redis = useRedis('mcs');
afterEach(stopMcsServices);

const LEASE_MS = 400;
const ref = (pool: string): PoolRef => ({ cluster: 'gpu-east-1', namespace: 'llm', pool });

/** The two-lease warnings of one pool. */
const stuckWarnings = (service: McsService, pool: PoolRef) =>
  service.warningsFor(poolKeyOf(pool)).filter((line) => 'since' in line);
const frontendlessWarnings = (service: McsService, pool: PoolRef) =>
  service.warningsFor(poolKeyOf(pool)).filter((line) => 'frontend_service' in line);
const portWarnings = (service: McsService, pool: PoolRef) =>
  service.warningsFor(poolKeyOf(pool)).filter((line) => 'slice' in line && 'port_name' in line);

/** Every read an operator or a probe makes; none of them may log anything. */
async function readEverything(service: McsService): Promise<void> {
  for (const path of ['/pools', '/healthz', '/readyz', '/debug/pools', '/debug/pools/gpu-east-1/llm/x']) {
    await (await fetch(`${service.url}${path}`)).arrayBuffer();
  }
}

/** Puts one pool of each kind into its condition: unregistered, one-sided (kept beating), lapsed. */
async function enterStuckStates(service: McsService, names: { unregistered: PoolRef; oneSided: PoolRef; lapsed: PoolRef }) {
  for (const object of joinedPoolSlices({ flavour: 'mcs', ...names.unregistered, n: 1 })) service.fake.add(object);
  for (const object of joinedPoolSlices({ flavour: 'mcs', ...names.lapsed, n: 2 })) service.fake.add(object);
  service.keepBeating([names.oneSided]);
  await service.heartbeat(names.lapsed); // once: it lapses while MCS still shows its relay Ready
  await waitFor(
    () =>
      service.stateOf(poolKeyOf(names.unregistered)) === 'unregistered' &&
      service.stateOf(poolKeyOf(names.oneSided)) === 'one-sided' &&
      service.stateOf(poolKeyOf(names.lapsed)) === 'lapsed',
    { message: 'the three conditions' },
  );
}

describe('warnings', () => {
  it('unregistered, one-sided and lapsed each warn once, two lease durations after the entry, with pool, state and since', async () => {
    const service = await startMcsService({ redis, leaseMs: LEASE_MS });
    const first = { unregistered: ref('u1'), oneSided: ref('o1'), lapsed: ref('l1') };
    const second = { unregistered: ref('u2'), oneSided: ref('o2'), lapsed: ref('l2') };

    await enterStuckStates(service, first);
    const firstPools = Object.values(first);
    await waitFor(
      async () => {
        await readEverything(service);
        return firstPools.every((pool) => stuckWarnings(service, pool).length > 0);
      },
      { message: 'the first warnings', timeoutMs: 6 * LEASE_MS + 3000 },
    );
    // The second set enters when the first has warned: its warnings come two leases later, by when the
    // first set has stayed in its condition four lease durations.
    await enterStuckStates(service, second);
    const secondPools = Object.values(second);
    await waitFor(
      async () => {
        await readEverything(service);
        return secondPools.every((pool) => stuckWarnings(service, pool).length > 0);
      },
      { message: 'the second warnings', timeoutMs: 6 * LEASE_MS + 3000 },
    );

    const causes = {
      unregistered: /do not call POST \/pools on this service with this key/,
      'one-sided': /check that cluster_id is the pool's MCS cluster name/,
      lapsed: /lost contact with the MCS implementation and the endpoint is stale/,
    } as const;
    for (const set of [first, second]) {
      for (const [state, pool] of [
        ['unregistered', set.unregistered],
        ['one-sided', set.oneSided],
        ['lapsed', set.lapsed],
      ] as const) {
        const warnings = stuckWarnings(service, pool);
        expect(warnings, `${pool.pool}`).toHaveLength(1);
        const [warning] = warnings as [Record<string, unknown>];
        expect(warning).toMatchObject({ level: 40, pool: poolKeyOf(pool), state });
        expect(warning.msg).toMatch(causes[state]);
        const debug = await service.debugPool(poolKeyOf(pool));
        expect(debug.state).toBe(state);
        expect(warning.since).toBe(debug.since);
        // Not before two lease durations in the condition.
        const inCondition = (warning.time as number) - Date.parse(String(warning.since));
        expect(inCondition, `${pool.pool} warned after ${inCondition} ms`).toBeGreaterThanOrEqual(2 * LEASE_MS - 2);
        expect(inCondition).toBeLessThan(2 * LEASE_MS + 1000);
      }
    }
  });

  it('warns again on a new entry into the condition, timed from that entry', async () => {
    const service = await startMcsService({ redis, leaseMs: LEASE_MS });
    const pool = ref('flapping');
    service.keepBeating([pool]);
    await waitFor(() => stuckWarnings(service, pool).length === 1, { message: 'the first warning', timeoutMs: 5000 });

    // The relay appears (live), then goes: one-sided again, a new entry.
    const [relay] = joinedPoolSlices({ flavour: 'mcs', ...pool, n: 1 });
    service.fake.add(relay!);
    await waitFor(() => service.stateOf(poolKeyOf(pool)) === 'frontendless', { message: 'listed' });
    service.fake.remove(relay!.metadata.namespace, relay!.metadata.name);
    await waitFor(() => service.stateOf(poolKeyOf(pool)) === 'one-sided', { message: 'one-sided again' });
    const reentered = Date.parse((await service.debugPool(poolKeyOf(pool))).since);
    await waitFor(() => stuckWarnings(service, pool).length === 2, { message: 'the second warning', timeoutMs: 5000 });

    const [firstWarning, secondWarning] = stuckWarnings(service, pool) as [Record<string, unknown>, Record<string, unknown>];
    expect(firstWarning.since).not.toBe(secondWarning.since);
    expect(Date.parse(String(secondWarning.since))).toBe(reentered);
    expect((secondWarning.time as number) - reentered).toBeGreaterThanOrEqual(2 * LEASE_MS - 2);
  });

  it('events and relists neither restart nor repeat a pending warning; ending the condition cancels it', async () => {
    // A longer lease: a timer restarted by the later events would fire well after the right time.
    const leaseMs = 600;
    const service = await startMcsService({ redis, leaseMs });
    const stays = ref('stays-one-sided');
    const joins = ref('joins-by-relist');
    const ticker = ref('lapses-meanwhile');
    const clock = ref('entered-later');
    // Its frontend slice (no relay) comes again with every relist.
    service.fake.add(slice({ flavour: 'mcs', ...stays, role: 'frontend', endpoints: [{ ip: '10.2.0.1' }] }));
    service.keepBeating([stays, joins]);
    await waitFor(() => service.stateOf(poolKeyOf(stays)) === 'one-sided' && service.stateOf(poolKeyOf(joins)) === 'one-sided', {
      message: 'one-sided',
    });
    const enteredAt = Date.parse((await service.debugPool(poolKeyOf(stays))).since);
    // Let about one lease pass (a pool registered once lapses), so a restarted timer would show.
    await service.heartbeat(ticker);
    await waitFor(() => service.stateOf(poolKeyOf(ticker)) === 'absent', { message: 'a lease later', timeoutMs: 5000 });

    // A changed registration (an upsert; the PoolRelay's next heartbeat changes it back) ...
    await service.heartbeat(stays, { model: 'org/changed' });
    // ... and, while the watch is down, joins-by-relist's relay appears; the re-watch gets 410, the relist shows it.
    service.fake.dropWatches();
    service.fake.add(slice({ flavour: 'mcs', ...joins, role: 'relay', endpoints: [{ ip: '10.1.0.2' }] }));
    service.fake.compact();
    await waitFor(() => service.source.stats.lists === 2, { message: 'the relist' });
    await waitFor(() => service.stateOf(poolKeyOf(joins)) === 'frontendless', { message: 'joined by the relist' });
    await waitFor(() => stuckWarnings(service, stays).length === 1, { message: 'the warning', timeoutMs: 5000 });
    const [warning] = stuckWarnings(service, stays) as [Record<string, unknown>];
    // Timed from the entry, not from the later events.
    expect(Date.parse(String(warning.since))).toBe(enteredAt);
    expect((warning.time as number) - enteredAt).toBeGreaterThanOrEqual(2 * leaseMs - 2);
    expect((warning.time as number) - enteredAt).toBeLessThan(2 * leaseMs + 400);

    // A pool entering one-sided now warns two leases later: by then, nothing repeated.
    service.keepBeating([clock]);
    await waitFor(() => stuckWarnings(service, clock).length === 1, { message: 'the later warning', timeoutMs: 5000 });
    expect(stuckWarnings(service, stays)).toHaveLength(1);
    expect(stuckWarnings(service, joins)).toEqual([]);
  });

  it('frontendless warns on each entry, with pool, frontend_service, port_name and frontend_slices_with_port; not on events that leave it so', async () => {
    const service = await startMcsService({ redis });
    const noSlice = ref('no-frontend-slice');
    const notReady = ref('frontend-not-ready');
    service.fake.add(slice({ flavour: 'mcs', ...noSlice, role: 'relay', endpoints: [{ ip: '10.1.0.1' }] }));
    service.fake.add(slice({ flavour: 'mcs', ...notReady, role: 'relay', endpoints: [{ ip: '10.1.0.2' }] }));
    const unreadyFrontend = slice({ flavour: 'mcs', ...notReady, role: 'frontend', endpoints: [{ ip: '10.2.0.2', ready: false }] });
    service.fake.add(unreadyFrontend);
    await service.heartbeat(noSlice);
    await service.heartbeat(notReady);
    await waitFor(() => frontendlessWarnings(service, noSlice).length === 1 && frontendlessWarnings(service, notReady).length === 1, {
      message: 'the frontendless warnings',
    });
    expect(frontendlessWarnings(service, noSlice)[0]).toMatchObject({
      level: 40,
      pool: poolKeyOf(noSlice),
      frontend_service: 'no-frontend-slice-frontend',
      port_name: 'http',
      frontend_slices_with_port: false,
    });
    expect(frontendlessWarnings(service, noSlice)[0]!.msg).toMatch(/usually because the Service is not exported/);
    expect(frontendlessWarnings(service, notReady)[0]).toMatchObject({
      pool: poolKeyOf(notReady),
      frontend_service: 'frontend-not-ready-frontend',
      port_name: 'http',
      frontend_slices_with_port: true,
    });

    // Events that leave the pool frontendless: a renewed or changed registration, another unready frontend
    // endpoint, another relay endpoint, repeated reads.
    await service.heartbeat(notReady, { model: 'org/changed' });
    service.fake.modify(
      slice({ flavour: 'mcs', ...notReady, role: 'frontend', endpoints: [{ ip: '10.2.0.2', ready: false }, { ip: '10.2.0.3', ready: false }] }),
    );
    service.fake.modify(slice({ flavour: 'mcs', ...notReady, role: 'relay', endpoints: [{ ip: '10.1.0.2' }, { ip: '10.1.0.3' }] }));
    await eventually(async () =>
      expect((await service.pools()).pools.find((p) => p.name === notReady.pool)).toMatchObject({
        model: 'org/changed',
        relays: ['http://10.1.0.2:9000', 'http://10.1.0.3:9000'],
        frontends: [],
      }),
    );
    for (let i = 0; i < 5; i += 1) await readEverything(service);
    expect(frontendlessWarnings(service, notReady)).toHaveLength(1);

    // A frontend becomes Ready (live), and the slice is then deleted: a new entry, a new warning.
    service.fake.modify(slice({ flavour: 'mcs', ...notReady, role: 'frontend', endpoints: [{ ip: '10.2.0.2' }] }));
    await waitFor(() => service.stateOf(poolKeyOf(notReady)) === 'live', { message: 'live' });
    service.fake.remove(unreadyFrontend.metadata.namespace, unreadyFrontend.metadata.name);
    await waitFor(() => frontendlessWarnings(service, notReady).length === 2, { message: 'the second warning' });
    expect(frontendlessWarnings(service, notReady)[1]).toMatchObject({ frontend_slices_with_port: false });
    expect(frontendlessWarnings(service, noSlice)).toHaveLength(1);
  });

  it('reads before the first sync, and relists, repeat no warning', async () => {
    const fake = await FakeKubeApi.start();
    const frontendless = ref('frontendless');
    const wrongPort = ref('wrong-port');
    fake.add(slice({ flavour: 'mcs', ...frontendless, role: 'relay', endpoints: [{ ip: '10.1.0.1' }] }));
    fake.add(slice({ flavour: 'mcs', ...wrongPort, role: 'relay', endpoints: [{ ip: '10.1.0.2' }] }));
    fake.add(slice({ flavour: 'mcs', ...wrongPort, role: 'frontend', endpoints: [{ ip: '10.2.0.2' }], ports: [{ name: 'grpc', port: 8001 }] }));
    // Every watch is refused with 410: the source lists (so the pools are known) but is never synced.
    fake.failNextWatches('http-410', 'http-410', 'http-410', 'http-410');
    const service = await startMcsService({ redis, fake, holdBackoff: true });
    await service.heartbeat(frontendless);
    await service.heartbeat(wrongPort);
    await waitFor(() => frontendlessWarnings(service, frontendless).length > 0 && frontendlessWarnings(service, wrongPort).length > 0, {
      message: 'the first warnings',
    });

    for (let attempt = 1; attempt <= 3; attempt += 1) {
      await waitFor(() => service.backoff.waiting === 1, { message: `backoff ${attempt}` });
      for (let i = 0; i < 5; i += 1) await readEverything(service);
      expect((await service.pools()).complete).toBe(false);
      expect((await fetch(`${service.url}/readyz`)).status).toBe(503);
      service.backoff.step(); // relist, then the next refused watch
    }
    await waitFor(() => service.source.stats.lists >= 3, { message: 'three lists' });
    expect(service.stateOf(poolKeyOf(frontendless))).toBe('frontendless');
    expect(service.source.stats.synced).toBe(false);
    expect(frontendlessWarnings(service, frontendless)).toHaveLength(1);
    expect(frontendlessWarnings(service, wrongPort)).toHaveLength(1);
    expect(portWarnings(service, wrongPort)).toHaveLength(1);
    expect(portWarnings(service, wrongPort)[0]).toMatchObject({ port_name: 'http' });

    service.backoff.release();
    await waitFor(async () => (await service.pools()).complete, { message: 'complete' });
    for (let i = 0; i < 5; i += 1) await readEverything(service);
    expect(frontendlessWarnings(service, frontendless)).toHaveLength(1);
    expect(frontendlessWarnings(service, wrongPort)).toHaveLength(1);
    expect(portWarnings(service, wrongPort)).toHaveLength(1);
  });
});
