// Reading a region through a read-only Redis replica (docs/contract.md §7): replica B's regions file
// names, for region A, a `replicaof` replica of A's Redis placed "in B's region". Everything works
// through it (a new pool, a content change, a lapse), B's entry for A stays complete, and the read replica
// never refuses a command: no READONLY in its error stats nor in B's logs.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { eventually, waitFor } from '../support/wait.js';
import { A, B, entryOf, keepRegistered, names, poolOf, regionsFile, useRegions } from './support.js';

// A's master starts a full sync at once (Redis 7.0 waits 5 s for more replicas by default).
const { servers, track, startReplicas } = useRegions([A, B], (name) => (name === A ? ['--repl-diskless-sync-delay', '0'] : []));

let readReplica: PrivateRedis;
let onReadReplica: Redis;
beforeAll(async () => {
  readReplica = await startPrivateRedis({ args: ['--replicaof', '127.0.0.1', String(servers.get(A)!.port)] });
  onReadReplica = new Redis(readReplica.url);
  await waitFor(async () => ((await onReadReplica.role()) as unknown[])[3] === 'connected', { timeoutMs: 10_000, message: 'the replica in sync' });
});
afterAll(async () => {
  onReadReplica?.disconnect();
  await readReplica?.stop();
});

/** Commands the read replica refused as READONLY since it started. */
async function readonlyRefusals(): Promise<number> {
  const stats = await onReadReplica.info('errorstats');
  return Number(/errorstat_READONLY:count=(\d+)/.exec(stats)?.[1] ?? 0);
}

describe('regions: a region read through a read-only replica of its Redis', () => {
  it('follows new pools, changes and lapses through the replica, which never refuses a command', async () => {
    const [onA, onB] = await startReplicas(regionsFile(servers), [A, B], { [B]: { [A]: readReplica.url } });
    track(await keepRegistered(onB.url, poolOf(B, 'b1')));

    const a1 = track(await keepRegistered(onA.url, poolOf(A, 'a1', { model: 'model-1' })));
    await eventually(
      async () => {
        const list = await onB.list();
        expect(list.pools.find((p) => p.name === 'a1')).toMatchObject({ model: 'model-1', lease_regions: [A] });
        expect(entryOf(list, A)).toEqual({ name: A, complete: true, dropped: false });
        expect(list.complete).toBe(true);
      },
      { timeoutMs: 10_000 },
    );

    // A content change, a new pool, and a lapse (A's replica sweeps it on the master) all arrive.
    await a1.change(poolOf(A, 'a1', { model: 'model-2' }));
    const a2 = await keepRegistered(onA.url, poolOf(A, 'a2'));
    await eventually(
      async () => {
        const list = await onB.list();
        expect(names(list)).toEqual(['a1', 'a2', 'b1']);
        expect(list.pools.find((p) => p.name === 'a1')?.model).toBe('model-2');
      },
      { timeoutMs: 5000 },
    );
    await a2.stop();
    await eventually(async () => expect(names(await onB.list())).toEqual(['a1', 'b1']), { timeoutMs: 10_000 });

    const list = await onB.list();
    expect(list.complete).toBe(true);
    expect(entryOf(list, A)).toEqual({ name: A, complete: true, dropped: false });
    expect(await readonlyRefusals()).toBe(0);
    expect(onB.logs.lines.filter((line) => JSON.stringify(line).includes('READONLY'))).toEqual([]);
    expect(onB.logs.lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
