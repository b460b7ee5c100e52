// The actor directory: one actor per pool key, retention of pools that left (docs/contract.md §3: visible in
// /debug for a while, bounded in number, then stopped), and the warnings with the fields §3 names.
import { afterEach, describe, expect, it } from 'vitest';
import { poolKey, type PoolKey, type PoolState } from '../../src/contract/index.js';
import { PoolDirectory, hasLeft, type PoolDirectoryOptions } from '../../src/join/pool-directory.js';
import type { WarningKind } from '../../src/join/warnings.js';
import type { PoolMode } from '../../machines/pool.machine.js';
import { EVENTS, LEASE_MS, type EventName } from '../machines/pool-events.js';
import { captureLogs } from '../support/logs.js';
import { directoryOnTestClocks } from './support.js';
import { registration } from '../support/registration.js';

const RETENTION_MS = 60_000;
const directories: PoolDirectory[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) directory.stop();
});

function directoryFor(mode: PoolMode, options: Partial<PoolDirectoryOptions> = {}) {
  const snapshots: Array<{ key: PoolKey; state: PoolState }> = [];
  const { directory, wall, advance } = directoryOnTestClocks(mode, {
    retentionMs: RETENTION_MS,
    onSnapshot: (key, snapshot) => snapshots.push({ key, state: snapshot.value as PoolState }),
    ...options,
  });
  directories.push(directory);
  const send = (key: PoolKey, name: EventName) => directory.send(key, EVENTS[name]);
  const stateOf = (key: PoolKey) => directory.get(key)?.getSnapshot().value;
  return { directory, send, stateOf, advance, wall, snapshots };
}

const keyNamed = (name: string) => poolKey({ cluster_id: 'c1', namespace: 'llm', name });
const [A, B, C] = [keyNamed('pool-a'), keyNamed('pool-b'), keyNamed('pool-c')];

describe('PoolDirectory: actors', () => {
  it('spawns one actor per key on first sight and routes events to it', () => {
    const { directory, send, stateOf, snapshots } = directoryFor('registrations');
    send(A, 'UPSERT_F');
    send(B, 'UPSERT_0');
    send(A, 'UPSERT_0');
    expect(directory.size).toBe(2);
    expect(stateOf(A)).toBe('frontendless');
    expect(stateOf(B)).toBe('frontendless');
    expect(snapshots.filter((s) => s.key === A).at(-1)?.state).toBe('frontendless');
    expect([...directory.contexts().keys()].sort()).toEqual([A, B]);
  });

  it('stamps events with the injected wall clock', () => {
    const { directory, send, wall } = directoryFor('registrations');
    wall.now = 1_800_000_000_000;
    send(A, 'UPSERT_F');
    expect(directory.get(A)!.getSnapshot().context.history).toEqual([
      { at: 1_800_000_000_000, event: 'LEASE_UPSERT', from: 'absent', to: 'live' },
    ]);
  });

  it('sendIfKnown spawns nothing for a key it never saw', () => {
    const { directory } = directoryFor('registrations');
    directory.sendIfKnown(A, EVENTS.LAPSE);
    expect(directory.size).toBe(0);
  });

  it('names left pools: absent, and lapsed in registrations mode only', () => {
    expect(hasLeft('mcs', 'absent')).toBe(true);
    expect(hasLeft('mcs', 'lapsed')).toBe(false);
    expect(hasLeft('registrations', 'lapsed')).toBe(true);
    expect(hasLeft('registrations', 'live')).toBe(false);
  });
});

describe('PoolDirectory: retention of pools that left', () => {
  const LEAVE: Record<PoolMode, { enter: EventName[]; leave: EventName[]; back: EventName[]; leftState: PoolState }> = {
    registrations: { enter: ['UPSERT_F'], leave: ['LAPSE'], back: ['UPSERT_F'], leftState: 'lapsed' },
    mcs: { enter: ['SLICES_RF', 'UPSERT_F'], leave: ['LAPSE', 'SLICES_00'], back: ['SLICES_RF'], leftState: 'absent' },
  };

  it.each(['registrations', 'mcs'] as const)('%s: a left pool stays until retention has passed and forgetLeft runs', (mode) => {
    const stopped: PoolKey[] = [];
    const { directory, send, stateOf, advance } = directoryFor(mode, { inspect: (step) => step.kind === 'stopped' && stopped.push(step.key) });
    const { enter, leave, leftState } = LEAVE[mode];
    for (const name of enter) send(A, name);
    for (const name of leave) send(A, name);
    expect(stateOf(A)).toBe(leftState);

    advance(RETENTION_MS - 1);
    directory.forgetLeft();
    expect(stateOf(A)).toBe(leftState);
    expect(directory.get(A)!.getSnapshot().context.history.length).toBeGreaterThan(0);

    advance(1);
    expect(directory.get(A)).toBeDefined(); // nothing forgets on its own without forgetLeft
    expect(stopped).toEqual([]);
    directory.forgetLeft();
    expect(directory.get(A)).toBeUndefined();
    expect(directory.size).toBe(0);
    expect(stopped).toEqual([A]);
  });

  it.each(['registrations', 'mcs'] as const)('%s: a pool that comes back is not forgotten', (mode) => {
    const { directory, send, stateOf, advance } = directoryFor(mode);
    const { enter, leave, back } = LEAVE[mode];
    for (const name of [...enter, ...leave]) send(A, name);
    advance(RETENTION_MS / 2);
    for (const name of back) send(A, name);
    advance(RETENTION_MS * 2);
    directory.forgetLeft();
    expect(stateOf(A)).toBeDefined();
    expect(stateOf(A)).not.toBe(LEAVE[mode].leftState);
  });

  it('a pool that leaves again is kept for a full retention from its second departure', () => {
    const { directory, send, stateOf, advance } = directoryFor('registrations');
    send(A, 'UPSERT_F');
    send(A, 'LAPSE');
    advance(RETENTION_MS - 10);
    send(A, 'UPSERT_F');
    send(A, 'LAPSE');
    advance(RETENTION_MS - 1);
    directory.forgetLeft();
    expect(stateOf(A)).toBe('lapsed');
    advance(1);
    directory.forgetLeft();
    expect(stateOf(A)).toBeUndefined();
  });

  it('keeps pools that did not leave however old they are', () => {
    const { directory, send, stateOf, advance } = directoryFor('mcs');
    send(A, 'SLICES_RF'); // unregistered
    send(B, 'UPSERT_F'); // one-sided
    send(C, 'SLICES_RF');
    send(C, 'UPSERT_F'); // live
    advance(RETENTION_MS * 10);
    directory.forgetLeft();
    expect([stateOf(A), stateOf(B), stateOf(C)]).toEqual(['unregistered', 'one-sided', 'live']);
  });

  it('keeps at most maxRetained left pools, evicting the oldest departure first', () => {
    const { directory, send, stateOf, advance } = directoryFor('registrations', { maxRetained: 2 });
    const keys = [A, B, C];
    for (const key of keys) send(key, 'UPSERT_F');
    send(keyNamed('stays'), 'UPSERT_F');
    for (const key of [B, A, C]) {
      advance(10);
      send(key, 'LAPSE');
    }
    // B left first: evicted as soon as a third pool left.
    expect(stateOf(B)).toBeUndefined();
    expect(stateOf(A)).toBe('lapsed');
    expect(stateOf(C)).toBe('lapsed');
    expect(stateOf(keyNamed('stays'))).toBe('live');
    expect(directory.size).toBe(3);
  });

  it('start() runs forgetLeft on a timer and stop() forgets every pool and cancels its delayed events', () => {
    const stopped: PoolKey[] = [];
    const { directory, send, advance } = directoryFor('mcs', { inspect: (step) => step.kind === 'stopped' && stopped.push(step.key) });
    send(A, 'UPSERT_F'); // one-sided: its stuck warning is due in two leases
    send(B, 'SLICES_RF'); // unregistered
    expect(directory.pendingDelays).toBe(2);
    directory.start();
    directory.stop();
    expect(directory.size).toBe(0);
    expect(directory.pendingDelays).toBe(0);
    expect(stopped.sort()).toEqual([A, B]);
    advance(10 * LEASE_MS);
    expect(directory.size).toBe(0);
  });
});

describe('PoolDirectory: warnings (docs/contract.md §3)', () => {
  function warnedDirectory(mode: PoolMode) {
    const { logger, lines, warnings } = captureLogs('info');
    const kinds: WarningKind[] = [];
    const setup = directoryFor(mode, { logger, onWarning: (kind) => kinds.push(kind) });
    return { ...setup, lines, kinds, warnings };
  }

  const STUCK = [
    { state: 'unregistered', kind: 'stuck_unregistered', enter: ['SLICES_RF'], cause: 'POST /pools' },
    { state: 'one-sided', kind: 'stuck_one_sided', enter: ['UPSERT_F'], cause: 'cluster_id' },
    { state: 'lapsed', kind: 'stuck_lapsed', enter: ['SLICES_RF', 'UPSERT_F', 'LAPSE'], cause: 'lost contact with the MCS implementation' },
  ] as const;

  it.each(STUCK)('mcs: $state for two leases logs one warning with pool, state and since', ({ state, kind, enter, cause }) => {
    const { send, advance, warnings, kinds, wall } = warnedDirectory('mcs');
    for (const name of enter) send(A, name);
    const enteredAt = wall.now;
    advance(2 * LEASE_MS - 1);
    expect(warnings()).toEqual([]);
    advance(1);
    advance(10 * LEASE_MS);

    expect(warnings()).toHaveLength(1);
    const [line] = warnings();
    expect(line).toMatchObject({ pool: 'c1/llm/pool-a', state, since: new Date(enteredAt).toISOString() });
    expect(line!.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(line!.msg).toContain(cause);
    expect(line!.msg).toContain('c1/llm/pool-a');
    expect(kinds).toEqual([kind]);
  });

  it('mcs: entering frontendless logs the frontend Service, port name and whether slices carry the port', () => {
    const { directory, send, warnings, kinds } = warnedDirectory('mcs');
    send(A, 'SLICES_R0'); // no slice with the port
    send(A, 'UPSERT_F');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({
      pool: 'c1/llm/pool-a',
      frontend_service: 'pool-a-frontend',
      port_name: 'http',
      frontend_slices_with_port: false,
    });
    expect(warnings()[0]!.msg).toContain('not exported');

    send(A, 'SLICES_RF');
    // Slices with the port, but none of their endpoints Ready.
    directory.send(A, { type: 'SLICES', relays: ['http://10.1.0.9:9000'], frontends: [], frontendSlicesWithPort: true });
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ frontend_slices_with_port: true, frontend_service: 'pool-a-frontend' });
    expect(warnings()[1]!.msg).toContain('none of their endpoints is Ready');
    expect(kinds).toEqual(['frontendless', 'frontendless']);
  });

  it('uses the configured frontend suffix and port name', () => {
    const { logger, lines } = captureLogs('warn');
    const { send } = directoryFor('mcs', { logger, frontendServiceSuffix: '-fe', frontendPortName: 'web' });
    send(A, 'SLICES_R0');
    send(A, 'UPSERT_F');
    expect(lines[0]).toMatchObject({ frontend_service: 'pool-a-fe', port_name: 'web' });
  });

  it('registrations: frontendless warns once per entry, a lapsed pool never warns', () => {
    const { directory, send, advance, warnings, kinds } = warnedDirectory('registrations');
    directory.send(A, { type: 'LEASE_UPSERT', registration: registration({ name: 'pool-a', frontends: [] }), deadlineMs: 1 });
    directory.send(A, { type: 'LEASE_UPSERT', registration: registration({ name: 'pool-a', frontends: [] }), deadlineMs: 2 });
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ pool: 'c1/llm/pool-a', state: 'frontendless' });
    send(A, 'LAPSE');
    advance(10 * LEASE_MS);
    expect(warnings()).toHaveLength(1);
    expect(kinds).toEqual(['frontendless']);
  });
});
