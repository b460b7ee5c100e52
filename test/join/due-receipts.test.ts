// A followed region's due read is judged by receipt order (docs/design.md "Remote deadlines", "Clocks"):
// it lapses a lease unless the lease's last upsert reached the replica after the read was sent, whatever
// the deadlines say. The region's store is a real memory store; only its due reads are answered by the
// test, at the moment it chooses, so a read can be made to cross a re-registration, or to report a
// deadline below the one the replica knew (as a Redis whose clock stepped back does).
import { setImmediate } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { poolKey } from '../../src/contract/index.js';
import { Join } from '../../src/join/join.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError } from '../../src/store/types.js';
import { AnsweredDue } from '../support/answered-due.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually, waitFor } from '../support/wait.js';

const running: Join[] = [];
afterEach(async () => {
  for (const join of running.splice(0)) await join.stop();
});

function start() {
  const home = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
  const followed = new AnsweredDue(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
  const join = new Join({
    poolDiscovery: 'registrations',
    leaseMs: 60_000,
    store: home,
    regions: { home: 'r1', followed: [{ name: 'r2', store: followed }], holdMs: 60_000 },
    logger: silentLogger(),
    sweepIntervalMs: 20,
    dueGraceMs: 0,
  });
  running.push(join);
  join.start();
  return { join, followed };
}

const POOL = registration({ cluster_id: 'c2', namespace: 'llm', name: 'followed' });
const models = (join: Join) => join.view.list().pools.map((p) => p.model);

describe('Join: due reads of a followed region, by receipt order', () => {
  it('leaves a lease re-registered after the read was sent, even when the deadline read is later than the one known', async () => {
    const { join, followed } = start();
    await followed.heartbeat(POOL);
    await eventually(() => expect(models(join)).toEqual([POOL.model]));
    const stale = followed.next();
    await stale.sent;
    // Re-registered (new content) while the read is in flight; the replica takes its upsert first.
    await followed.heartbeat({ ...POOL, model: 'second' });
    await eventually(() => expect(models(join)).toEqual(['second']));
    // The read, judged before the re-registration, lists the lease; a deadline comparison would take it.
    stale.answer([{ key: poolKey(POOL), atMs: Number.MAX_SAFE_INTEGER }]);
    const after = followed.next();
    await after.sent;
    after.answer([]);
    // One more read sent and answered: the stale one was applied before it.
    const last = followed.next();
    await last.sent;
    last.answer([]);
    expect(models(join)).toEqual(['second']);
  });

  it('lapses a lease whose last upsert came before the read was sent, even when the deadline read is below the one known', async () => {
    const { join, followed } = start();
    await followed.heartbeat(POOL);
    await eventually(() => expect(models(join)).toEqual([POOL.model]));
    const known = join.directory.snapshot(poolKey(POOL))!.context.leases.r2!.deadlineMs;
    const read = followed.next();
    await read.sent;
    // As from a Redis whose clock stepped back a minute after the upsert: the renewals since set an
    // earlier deadline than the one the replica learned with the upsert, and it has passed.
    read.answer([{ key: poolKey(POOL), atMs: known - 60_000 }]);
    await waitFor(() => models(join).length === 0, { timeoutMs: 2000, message: 'the lease lapsed' });
    expect(join.view.list().pools).toEqual([]);
  });

  it('judges a read sent while a snapshot is read as sent before it: the lease the snapshot hands over stays', async () => {
    const { join, followed } = start();
    await followed.heartbeat(POOL);
    await eventually(() => expect(models(join)).toEqual([POOL.model]));
    const stale = followed.next();
    // The next snapshot hands the lease over only once a due read (which will list it as run out) was
    // sent meanwhile: as a read that finds the lease renewed after the due read was sent.
    followed.readScripts.push(async (full, onRead) => {
      await stale.sent;
      onRead!(full.records);
      await setImmediate();
      return full;
    });
    followed.breakWatches(new PositionLostError('0-0'));
    await stale.sent;
    await eventually(() => expect(followed.snapshotCalls).toBe(2));
    await eventually(() => expect(join.view.complete).toBe(true));
    stale.answer([{ key: poolKey(POOL), atMs: Date.now() - 1000 }]);
    // Two more due reads sent and answered: the stale one was applied before them.
    for (let i = 0; i < 2; i += 1) {
      const later = followed.next();
      await later.sent;
      later.answer([]);
    }
    expect(models(join)).toEqual([POOL.model]);
  });
});
