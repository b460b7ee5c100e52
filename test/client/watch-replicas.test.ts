// watchPools() against `poolscope serve` processes: it switches to another replica when its replica dies;
// across a replica restart (memory store) and across a Redis outage with a restart in the middle, it
// keeps known pools while `complete` is false and removes a lapsed pool only once a list is complete.
import { afterEach, describe, expect, it } from 'vitest';
import { watchPools, type PoolChange, type PoolWatch, type WatchStatus } from '../../src/client/index.js';
import { startRelay, type Relay } from '../../src/relay/index.js';
import { freePort, redisReplicaFlags, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { useRedis } from '../support/use-redis.js';
import { throughout, waitFor } from '../support/wait.js';
import { spawnReplica, type ReplicaProcess } from './support.js';

const LEASE_MS = 2000;
const TIMING = [`--lease-duration-secs=${LEASE_MS / 1000}`, '--heartbeat-interval-secs=0.4'];
/** The switch test's lease: far longer than the test, so only the watch could lose p1. */
const SWITCH_LEASE_SECS = 60;

interface Timeline {
  watch: PoolWatch;
  /** Each change with the watch's completeness when it was reported. */
  changes: (PoolChange & { at: number; complete: boolean })[];
  statuses: (WatchStatus & { at: number })[];
}

const stoppers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stoppers.splice(0).reverse()) await stop();
});

function follow(servers: string[]): Timeline {
  const watch = watchPools({ servers, random: () => 0, backoff: { initialMs: 100, maxMs: 500 } });
  stoppers.push(() => watch.close());
  const timeline: Timeline = { watch, changes: [], statuses: [] };
  watch.onChange((change) => timeline.changes.push({ ...change, at: Date.now(), complete: watch.status.complete }));
  watch.onStatus((status) => timeline.statuses.push({ ...status, at: Date.now() }));
  return timeline;
}

function relay(server: string | string[], name: string): Relay {
  const r = startRelay({ servers: Array.isArray(server) ? server : [server], registration: registration({ name }), backoff: { initialMs: 100 } });
  stoppers.push(() => r.stop());
  return r;
}

const removed = (t: Timeline, name: string) => t.changes.filter((c) => c.type === 'removed' && c.key.endsWith(`/${name}`));
const knows = (t: Timeline, name: string) => t.watch.get(`us-east-1/llm/${name}`) !== undefined;

describe('on one Redis', () => {
  const redis = useRedis('watch');
  const args = () => [...redisReplicaFlags(redis, redis.prefix), ...TIMING];

  it('switches to another replica when its replica dies, losing no pool', async () => {
    // A lease no starved relay can lapse within the test: the test is about the watch's switch. With the
    // 2 s lease, two seconds without a renewal on a loaded machine (relay POSTs past their 250 ms timeout,
    // Redis calls past the 300 ms command timeout answered 503) lapse p1 for real, and b rightly deletes it.
    const switchArgs = () => [...redisReplicaFlags(redis, redis.prefix), `--lease-duration-secs=${SWITCH_LEASE_SECS}`, '--heartbeat-interval-secs=0.4'];
    const [a, b] = await Promise.all([startPoolscope(switchArgs()), startPoolscope(switchArgs())]);
    stoppers.push(() => a.stop('SIGKILL'), () => b.stop('SIGKILL'));
    relay(b.url, 'p1');
    const t = follow([a.url, b.url]);
    await waitFor(() => knows(t, 'p1') && t.watch.status.server === a.url && t.watch.status.complete, { timeoutMs: 10_000 });
    // b lists p1 too before a dies: a replica that has just started may list p1 a few ms after another
    // (it follows the change log), and a complete list without it would rightly remove it.
    await waitFor(async () => {
      const list = (await (await fetch(`${b.url}/pools`)).json()) as { complete: boolean; pools: { name: string }[] };
      return list.complete && list.pools.some((p) => p.name === 'p1');
    }, { timeoutMs: 10_000 });
    await a.stop('SIGKILL');
    await waitFor(() => t.watch.status.server === b.url && t.watch.status.transport === 'sse', { timeoutMs: 10_000 });
    relay(b.url, 'p2');
    await waitFor(() => knows(t, 'p2'), { timeoutMs: 5000 });
    expect(knows(t, 'p1')).toBe(true);
    expect(t.changes.filter((c) => c.type === 'removed')).toEqual([]);
  });

  it('across a Redis outage and a restart of its replica, keeps known pools while incomplete; drops the lapsed one only on a complete list', async () => {
    const port = await freePort();
    let a: ReplicaProcess = await spawnReplica(args(), port);
    const b: PoolscopeProcess = await startPoolscope(args());
    stoppers.push(() => b.stop('SIGKILL'), () => a.stop());
    relay(b.url, 'stays');
    const leaving = relay(b.url, 'lapses');
    const t = follow([a.url]);
    await waitFor(() => knows(t, 'stays') && knows(t, 'lapses') && t.watch.status.complete, { timeoutMs: 10_000 });

    // The lapsing pool's last heartbeat, then Redis freezes: no lease can lapse while it is frozen.
    await leaving.stop();
    redis.pause();
    const pausedAt = Date.now();
    await waitFor(() => !t.watch.status.complete, { timeoutMs: 5000 });

    // Its replica dies and comes back while Redis is still frozen: the new process knows no pool.
    await a.stop('SIGKILL');
    a = await spawnReplica(args(), port);
    await waitFor(() => t.statuses.some((s) => s.at > pausedAt && s.transport === 'disconnected'));
    await waitFor(() => t.watch.status.transport === 'sse', { timeoutMs: 10_000 });
    expect(t.watch.status.complete).toBe(false);
    const empty = await (await fetch(`${a.url}/pools`)).json();
    expect(empty).toMatchObject({ complete: false, pools: [] });
    // Longer than a lease on the frozen store: both pools kept throughout.
    const bothKnown = () => expect(knows(t, 'stays') && knows(t, 'lapses')).toBe(true);
    await throughout(LEASE_MS, 100, bothKnown);
    bothKnown();
    expect(t.changes.filter((c) => c.type === 'removed')).toEqual([]);

    redis.resume();
    const resumedAt = Date.now();
    await waitFor(() => !knows(t, 'lapses'), { timeoutMs: 10_000, message: 'the lapsed pool removed' });
    const [removal] = removed(t, 'lapses');
    expect(removal!.at).toBeGreaterThanOrEqual(resumedAt);
    expect(removal!.complete).toBe(true);
    // Redis was frozen for longer than a lease, so on its clock the heartbeating pool's lease ran out too,
    // during the outage: the renewal window holds it until its relay renews it (docs/contract.md §9), so
    // it is never removed, on any list.
    await waitFor(() => t.watch.status.complete && knows(t, 'stays'), { timeoutMs: 5000, message: 'the renewed pool listed on a complete list' });
    expect(removed(t, 'stays')).toEqual([]);
  });
});

describe('on a memory store', () => {
  it('across a restart of its replica, keeps a pool missing from incomplete lists, and drops it once the list is complete', async () => {
    const port = await freePort();
    let a: PoolscopeProcess = await startPoolscope(TIMING, { port });
    stoppers.push(() => a.stop('SIGKILL'));
    relay(a.url, 'stays');
    const leaving = relay(a.url, 'lapses');
    const t = follow([a.url]);
    await waitFor(() => knows(t, 'stays') && knows(t, 'lapses'), { timeoutMs: 10_000 });

    await leaving.stop();
    await a.stop('SIGKILL');
    const restartedAt = Date.now();
    a = await startPoolscope(TIMING, { port });
    // The restarted replica forgot both; the one still heartbeating comes back within an interval.
    await waitFor(() => t.statuses.some((s) => s.at > restartedAt && s.transport === 'sse'), { timeoutMs: 10_000 });
    await waitFor(() => t.watch.status.complete, { timeoutMs: LEASE_MS + 3000 });
    const [removal] = removed(t, 'lapses');
    expect(removal).toBeDefined();
    expect(removal!.complete).toBe(true);
    // It was kept for the whole incomplete lease after the restart.
    expect(removal!.at - restartedAt).toBeGreaterThanOrEqual(LEASE_MS - 200);
    expect(knows(t, 'stays')).toBe(true);
    expect(removed(t, 'stays')).toEqual([]);
  });
});
