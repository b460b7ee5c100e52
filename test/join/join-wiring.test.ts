// What the join hands on beyond the view: the frontendless warning's names (the Service suffix and port
// name it defaults to, or those it is given), the home store's renewal window for /healthz and each outage
// for the metrics, and the routers and status of the slice source for the routers' join.
import { afterEach, describe, expect, it } from 'vitest';
import { Join, type JoinOptions } from '../../src/join/join.js';
import type { SliceRouter, SliceSourceListener } from '../../src/kube/types.js';
import { createMemoryStore } from '../../src/store/memory.js';
import type { RenewalWindowStatus } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { captureLogs, silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually } from '../support/wait.js';
import { HandDrivenSliceSource } from './support.js';

const LEASE_MS = 60_000;
const joins: Join[] = [];
afterEach(async () => {
  for (const join of joins.splice(0)) await join.stop();
});

function startJoin(options: Partial<JoinOptions> & Pick<JoinOptions, 'store'>): Join {
  const join = new Join({ poolDiscovery: 'mcs', leaseMs: LEASE_MS, logger: silentLogger(), sweepIntervalMs: 10, ...options });
  joins.push(join);
  join.start();
  return join;
}

const keepingStore = () => new DelegatingStore(createMemoryStore({ leaseMs: LEASE_MS }), { forgetsOnRestart: false });

describe('Join: the frontendless warning’s names', () => {
  async function frontendlessWarning(names: Pick<JoinOptions, 'frontendServiceSuffix' | 'frontendPortName'>) {
    const store = keepingStore();
    const slices = new HandDrivenSliceSource();
    const logs = captureLogs('warn');
    const join = startJoin({ store, slices, logger: logs.logger, ...names });
    slices.resync({});
    slices.status(true);
    await store.heartbeat(registration({ cluster_id: 'c1', namespace: 'llm', name: 'llama' }));
    slices.update('c1/llm/llama', { relays: ['http://10.1.0.1:9000'], frontends: [], frontendSlicesWithPort: false });
    await eventually(() => expect(join.directory.get('c1/llm/llama')?.getSnapshot().value).toBe('frontendless'));
    const warning = logs.warnings().find((line) => line.pool === 'c1/llm/llama');
    expect(warning).toBeDefined();
    return warning!;
  }

  it('by default names `<name>-frontend` and the port "http"', async () => {
    const warning = await frontendlessWarning({});
    expect([warning.frontend_service, warning.port_name, warning.frontend_slices_with_port]).toEqual(['llama-frontend', 'http', false]);
  });

  it('names the suffix and port it is given', async () => {
    const warning = await frontendlessWarning({ frontendServiceSuffix: '-fe', frontendPortName: 'web' });
    expect([warning.frontend_service, warning.port_name]).toEqual(['llama-fe', 'web']);
    expect(warning.msg).toContain('llama-fe with port "web"');
  });
});

describe('Join: the home store’s outages', () => {
  const OUTAGE = { startMs: 990_000, endMs: 995_000, windowMs: 6000, covered: 2 };
  /** A store whose writers recorded an outage whose renewal window is still open (1 s left). */
  class OutageStore extends DelegatingStore {
    constructor() {
      super(createMemoryStore({ leaseMs: LEASE_MS }), { forgetsOnRestart: false });
    }
    renewalWindow(): Promise<RenewalWindowStatus> {
      return Promise.resolve({ nowMs: 1_000_000, stampMs: 999_900, lastOutage: OUTAGE, open: true, holding: true });
    }
  }

  it('has no window before an outage is read', async () => {
    const join = startJoin({ poolDiscovery: 'registrations', store: keepingStore() });
    await eventually(() => expect(join.storeReadable).toEqual({ ok: true }));
    expect(join.homeWindow).toBeUndefined();
  });

  it('hands /healthz the outage’s end and its open window, and the metrics the outage, named by its region', async () => {
    const outages: string[] = [];
    const join = startJoin({ poolDiscovery: 'registrations', store: new OutageStore(), onStoreOutage: (region) => outages.push(region) });
    await eventually(() => expect(join.homeWindow).toEqual({ last_outage_ended: new Date(OUTAGE.endMs).toISOString(), renewal_window_open: true }));
    await eventually(() => expect(outages).toEqual(['']));
  });
});

describe('Join: the routers of the slice source', () => {
  it('hands its routers and its status to the routers’ sink, with no sink dropping them', () => {
    const withSink = new HandDrivenSliceSource();
    const heard: unknown[] = [];
    const join = new Join({ poolDiscovery: 'mcs', leaseMs: LEASE_MS, store: keepingStore(), slices: withSink, logger: silentLogger() });
    joins.push(join);
    join.followRouters({ routers: (routers) => heard.push(['routers', routers]), status: (synced, reason) => heard.push(['status', synced, reason]) });
    join.start();
    const listener = (source: HandDrivenSliceSource) => (source as unknown as { listener: SliceSourceListener }).listener;
    const routers: SliceRouter[] = [{ id: 'c1/routing/router-a', url: 'http://10.3.0.1:8080' }];
    listener(withSink).routers?.(routers);
    withSink.status(false, 'list failed: 500');
    expect(heard).toEqual([
      ['routers', routers],
      ['status', false, 'list failed: 500'],
    ]);
    expect(join.sourceStatuses().find((s) => s.name === 'kubernetes')?.reason).toBe('kubernetes: list failed: 500');

    const withoutSink = new HandDrivenSliceSource();
    startJoin({ store: keepingStore(), slices: withoutSink });
    expect(() => listener(withoutSink).routers?.(routers)).not.toThrow();
    expect(() => withoutSink.status(true)).not.toThrow();
  });
});
