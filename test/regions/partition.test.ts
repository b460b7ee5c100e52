// A region cut off (docs/contract.md §7): replica B follows region A's Redis through a TCP proxy that is
// made to hold every byte (a half-open WAN partition). B notices within the command timeout (+250 ms),
// keeps A's pools listed for the hold with A's entry incomplete since then, drops them with a `delete`
// each on its watch stream (entry `dropped: true`), touches no pool of another region, and when the path
// comes back A's pools return and the entry is complete again: from the log, resumed where B left it, or,
// when the log no longer reaches back (A's stream deleted while cut), from a snapshot.
import { describe, expect, it } from 'vitest';
import { createStoreKeys } from '../../src/store/redis/keys.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { eventually, throughout, waitFor } from '../support/wait.js';
import {
  A,
  B,
  COMMAND_TIMEOUT_MS,
  entryOf,
  HOLD_MS,
  inspectRedis,
  keepRegistered,
  names,
  NOTICE_SLACK_MS,
  openWatch,
  poolOf,
  regionsFile,
  useRegions,
  type Replica,
} from './support.js';

const C = 'ap-south-1';
const { servers, track, startReplicas, proxyTo } = useRegions([A, B, C]);

/** A replica per region; B reads A through the proxy, everyone else reads directly. */
async function startWorld() {
  const file = regionsFile(servers);
  const proxy = await proxyTo(A);
  const [onA, onB, onC] = await startReplicas(file, [A, B, C], { [B]: { [A]: proxy.url } });
  return { file, proxy, onA, onB, onC };
}

/** Cut B from A, and wait until B's entry for A says so; returns when it was cut and the entry's time. */
async function cut(proxy: TcpProxy, onB: Replica) {
  const cutAt = Date.now();
  proxy.hold();
  const entry = await waitFor(
    async () => {
      const found = entryOf(await onB.list(), A);
      return found?.complete === false ? found : undefined;
    },
    { timeoutMs: 5000, intervalMs: 5, message: "B's entry for A incomplete" },
  );
  return { cutAt, entry, since: Date.parse(entry.unreachable_since!) };
}

describe('regions: a cut-off region is held, dropped, and read again', () => {
  it('holds the region for the hold, then drops its pools with a delete each and no other pool touched; the pools return once the path does', async () => {
    const { proxy, onA, onB, onC } = await startWorld();
    for (const name of ['a1', 'a2']) track(await keepRegistered(onA.url, poolOf(A, name)));
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));
    track(await keepRegistered(onC.url, poolOf(C, 'c1')));
    const ALL = ['a1', 'a2', 'b1', 'c1'];
    await eventually(
      async () => {
        const list = await onB.list();
        expect(names(list)).toEqual(ALL);
        expect(list.complete).toBe(true);
      },
      { timeoutMs: 10_000 },
    );
    const watch = track(await openWatch(onB.url));
    await waitFor(() => watch.of('resync').length === 1);

    // Noticed within the command timeout (+ 250 ms): A's entry incomplete since then, its pools still there.
    const { cutAt, entry, since } = await cut(proxy, onB);
    expect(entry).toMatchObject({ complete: false, dropped: false });
    expect(entry.reason).toEqual(expect.any(String));
    expect(since - cutAt).toBeLessThanOrEqual(COMMAND_TIMEOUT_MS + NOTICE_SLACK_MS);
    const held = await onB.list();
    expect(held.complete).toBe(false);
    expect(held.regions?.filter((r) => r.name !== A).every((r) => r.complete && !r.dropped)).toBe(true);

    // Held, unchanged, for the hold.
    await throughout(since + HOLD_MS - 100 - Date.now(), 50, async () => {
      const list = await onB.list();
      expect(names(list)).toEqual(ALL);
      expect(entryOf(list, A)).toMatchObject({ complete: false, dropped: false, unreachable_since: entry.unreachable_since });
    });

    // Then dropped: a delete each, gone from GET /pools, the entry says so.
    await waitFor(() => watch.of('delete').length >= 2, { timeoutMs: 5000, message: 'two deletes' });
    expect(Date.now() - since).toBeLessThan(HOLD_MS + 1000);
    const dropped = await onB.list();
    expect(names(dropped)).toEqual(['b1', 'c1']);
    expect(entryOf(dropped, A)).toMatchObject({ complete: false, dropped: true, unreachable_since: entry.unreachable_since });
    expect(dropped.complete).toBe(false);
    const deleted = watch.of('delete').map((m) => (m.data as { pool: { name: string } }).pool.name);
    expect(deleted.sort()).toEqual(['a1', 'a2']);
    // No event names a pool of another region: no upsert at all, no other delete.
    expect(watch.of('upsert')).toEqual([]);
    // A replica that reads A directly never noticed anything.
    const onCList = await onC.list();
    expect(onCList.complete).toBe(true);
    expect(names(onCList)).toEqual(ALL);

    // The path comes back: A's pools return on B (upsert or resync) and the entry is complete again.
    const before = watch.messages.length;
    const linesBefore = onB.logs.lines.length;
    proxy.release();
    await eventually(
      async () => {
        const list = await onB.list();
        expect(names(list)).toEqual(ALL);
        expect(entryOf(list, A)).toEqual({ name: A, complete: true, dropped: false });
        expect(list.complete).toBe(true);
      },
      { timeoutMs: 15_000 },
    );
    const returned = watch.messages.slice(before).flatMap((m) => {
      if (m.event === 'upsert') return [(m.data as { pool: { name: string } }).pool.name];
      if (m.event === 'resync') return (m.data as { pools: { name: string }[] }).pools.map((p) => p.name);
      return [];
    });
    expect(returned).toEqual(expect.arrayContaining(['a1', 'a2']));
    expect(watch.of('delete')).toHaveLength(2);
    expect(names(await onA.list())).toEqual(ALL);
    // From A's log, resumed where B left it: A was not read whole again.
    const onReturn = onB.logs.lines.slice(linesBefore).filter((l) => l.region === A);
    expect(onReturn.filter((l) => l.msg === 'change log resumed')).toHaveLength(1);
    expect(onReturn.filter((l) => l.msg === 'store snapshot applied')).toEqual([]);
  });

  it('reads a snapshot when the log no longer reaches back: changes made while cut (a lapse, a new pool) show', async () => {
    const { file, proxy, onA, onB } = await startWorld();
    track(await keepRegistered(onA.url, poolOf(A, 'a-kept')));
    const leaving = await keepRegistered(onA.url, poolOf(A, 'a-leaving'));
    track(leaving);
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));
    await eventually(async () => expect(names(await onB.list())).toEqual(['a-kept', 'a-leaving', 'b1']), { timeoutMs: 10_000 });

    await cut(proxy, onB);
    // While cut: one pool lapses in A (its replica logs the lapse), another is registered, and then A's
    // change log is lost altogether, so B's position in it no longer exists.
    await leaving.stop();
    await waitFor(async () => !names(await onA.list()).includes('a-leaving'), { timeoutMs: 10_000, message: 'the lapse in A' });
    track(await keepRegistered(onA.url, poolOf(A, 'a-new')));
    const inA = track(inspectRedis(servers.get(A)!.url));
    const { prefix } = file.find((r) => r.name === A)!;
    await inA.redis.del(createStoreKeys(prefix).changes);
    // B has not seen any of it.
    expect(names(await onB.list()).filter((n) => n !== 'b1')).not.toContain('a-new');

    proxy.release();
    await eventually(
      async () => {
        const list = await onB.list();
        expect(names(list)).toEqual(['a-kept', 'a-new', 'b1']);
        expect(entryOf(list, A)).toEqual({ name: A, complete: true, dropped: false });
        expect(list.complete).toBe(true);
      },
      { timeoutMs: 15_000 },
    );
    // And B goes on following A's new log from there.
    track(await keepRegistered(onA.url, poolOf(A, 'a-after')));
    await eventually(async () => expect(names(await onB.list())).toEqual(['a-after', 'a-kept', 'a-new', 'b1']), { timeoutMs: 5000 });
  });
});
