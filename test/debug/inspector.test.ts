// PoolInspector on real pool actors (PoolDirectory, MCS mode): each transition gets the cause XState
// inspection saw (the event's facts and the guarded transition taken), lapses are reported once, and a
// stopped actor is reported as gone.
import { silentLogger } from '../support/logs.js';
import { afterEach, describe, expect, it } from 'vitest';
import { PoolInspector, type PoolChange } from '../../src/debug/inspector.js';
import { PoolDirectory } from '../../src/join/pool-directory.js';
import type { Registration } from '../../src/contract/index.js';

const KEY = 'c1/ns/pool';
const REGISTRATION: Registration = {
  cluster_id: 'c1',
  namespace: 'ns',
  name: 'pool',
  model: 'm',
  capabilities: [],
  capacity: [],
  location: {},
  frontends: [],
};

describe('PoolInspector', () => {
  let directory: PoolDirectory | undefined;
  afterEach(() => directory?.stop());

  const start = () => {
    const inspector = new PoolInspector();
    const changes: PoolChange[] = [];
    inspector.subscribe((change) => changes.push(change));
    let now = 1_000;
    directory = new PoolDirectory({
      mode: 'mcs',
      leaseMs: 1000,
      logger: silentLogger(),
      frontendServiceSuffix: '-frontend',
      frontendPortName: 'http',
      onSnapshot: () => {},
      now: () => (now += 10),
      retentionMs: 0,
      inspect: inspector.inspect,
    });
    return { inspector, changes, directory };
  };

  it('explains each transition by its event and guard', () => {
    const { inspector, directory } = start();
    directory.send(KEY, { type: 'SLICES', relays: ['10.0.0.9'], frontends: [], frontendSlicesWithPort: false });
    directory.send(KEY, { type: 'LEASE_UPSERT', registration: REGISTRATION, deadlineMs: 5000 });
    directory.send(KEY, { type: 'SLICES', relays: ['10.0.0.9'], frontends: ['http://10.0.0.7:8000'], frontendSlicesWithPort: true });
    const history = directory.get(KEY)!.getSnapshot().context.history;
    expect(history.map((h) => `${h.from}→${h.to}`)).toEqual(['absent→unregistered', 'unregistered→frontendless', 'frontendless→live']);
    expect(history.map((h) => inspector.causeOf(h))).toEqual([
      { transition: 'pool.absent|always|0', guard: 'isUnregistered', detail: 'EndpointSlices now show 1 Ready PoolRelay endpoint and 0 Ready frontends (no frontend slice with the named port)' },
      { transition: 'pool.unregistered|always|1', guard: 'isFrontendless', detail: expect.stringContaining('new or changed registration (model m)') },
      { transition: 'pool.frontendless|always|0', guard: 'isLive', detail: 'EndpointSlices now show 1 Ready PoolRelay endpoint and 1 Ready frontend' },
    ]);
  });

  it('reports a lease lapse once, and an actor that stops', () => {
    const { changes, directory } = start();
    directory.send(KEY, { type: 'SLICES', relays: ['10.0.0.9'], frontends: ['http://10.0.0.7:8000'], frontendSlicesWithPort: true });
    directory.send(KEY, { type: 'LEASE_UPSERT', registration: REGISTRATION, deadlineMs: 5000 });
    directory.send(KEY, { type: 'LEASE_LAPSED' });
    directory.send(KEY, { type: 'LEASE_LAPSED' });
    const lapses = changes.filter((c) => c.kind === 'snapshot' && c.leaseLapsed);
    expect(lapses).toHaveLength(1);
    const moved = changes.flatMap((c) => (c.kind === 'snapshot' ? c.transitions.map((t) => t.to) : []));
    expect(moved).toEqual(['unregistered', 'live', 'lapsed']);

    // MCS drops the relay: the pool leaves (absent), and with no retention its actor stops.
    directory.send(KEY, { type: 'SLICES', relays: [], frontends: [], frontendSlicesWithPort: false });
    directory.forgetLeft();
    expect(changes.at(-1)).toEqual({ kind: 'stopped', key: KEY });
    expect(directory.get(KEY)).toBeUndefined();
  });
});
