// A followed region's due read is judged by receipt order (docs/design.md "Remote deadlines", "Clocks"):
// it lapses a lease unless the lease's last upsert reached the replica after the read was sent, whatever
// the deadlines say. The region's store is a real memory store; only its due reads are answered by the
// test, at the moment it chooses, so a read can be made to cross a re-registration, or to report a
// deadline below the one the replica knew (as a Redis whose clock stepped back does).
import { afterEach, describe, expect, it } from 'vitest';
import { poolKey } from '../../src/contract/index.js';
import { Join } from '../../src/join/join.js';
import { createMemoryStore } from '../../src/store/memory.js';
import type { DueLapse } from '../../src/store/types.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { silentLogger } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { eventually, waitFor } from '../support/wait.js';

/** Due reads held until the test answers them; without an answer queued, nothing is due. */
class AnsweredDue extends DelegatingStore {
  private readonly pending: Array<{ sent: () => void; reply: Promise<DueLapse[]> }> = [];

  /** The next due read: `sent` once the feed has sent it, answered with `answer`. */
  next(): { sent: Promise<void>; answer(lapses: DueLapse[]): void } {
    let sent!: () => void;
    let answer!: (lapses: DueLapse[]) => void;
    const wasSent = new Promise<void>((resolve) => (sent = resolve));
    const reply = new Promise<DueLapse[]>((resolve) => (answer = resolve));
    this.pending.push({ sent, reply });
    return { sent: wasSent, answer };
  }

  override async dueLapses(): Promise<DueLapse[]> {
    const due = this.pending.shift();
    if (!due) return [];
    due.sent();
    return due.reply;
  }
}

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
});
