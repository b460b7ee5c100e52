// The RegistrationStore contract: one suite, run unchanged against every implementation
// (memory.test.ts, redis.test.ts). Time is the store's own (Redis TIME for Redis), so lapses are tested
// with short leases and polling with deadlines.
import { afterEach, describe, expect, it } from 'vitest';
import type { LeaseEvent, RegistrationStore } from '../../src/store/types.js';
import { PositionLostError } from '../../src/store/types.js';
import { eventually, keyOf, pause, registration, ReplayedView, WatchRecorder } from './contract-support.js';

export interface StoreWorldOptions {
  leaseMs: number;
  changeLogCap?: number;
}

/** One store's shared state, seen through any number of replicas. */
export interface StoreWorld {
  /** Another handle on the same leases, as another replica of the service would hold it. */
  replica(): Promise<RegistrationStore>;
  /** Closes every replica. */
  close(): Promise<void>;
}

export interface StoreContractTarget {
  /** A new, empty store. */
  open(options: StoreWorldOptions): Promise<StoreWorld>;
}

const SHORT_LEASE_MS = 300;
const LONG_LEASE_MS = 60_000;
/** Redis reads its clock (TIME) to the whole ms, so a duration it reports may be up to 1 ms longer. */
const CLOCK_GRAIN_MS = 1;

export function describeStoreContract(name: string, target: StoreContractTarget): void {
  describe(`RegistrationStore contract: ${name}`, () => {
    const worlds: StoreWorld[] = [];
    const recorders: WatchRecorder[] = [];
    afterEach(async () => {
      await Promise.all(recorders.splice(0).map((r) => r.stop()));
      await Promise.all(worlds.splice(0).map((w) => w.close()));
    });

    async function open(options: StoreWorldOptions): Promise<RegistrationStore> {
      const world = await target.open(options);
      worlds.push(world);
      return world.replica();
    }
    async function openReplicas(count: number, options: StoreWorldOptions): Promise<RegistrationStore[]> {
      const world = await target.open(options);
      worlds.push(world);
      return Promise.all(Array.from({ length: count }, () => world.replica()));
    }
    function record(store: RegistrationStore, position: string, onEvent?: (e: LeaseEvent) => void): WatchRecorder {
      const recorder = new WatchRecorder(store, position, onEvent);
      recorders.push(recorder);
      return recorder;
    }

    it('creates a lease and keeps it alive while it is renewed', async () => {
      // A longer lease than elsewhere: a stalled event loop on a busy machine must not look like a lapse.
      const leaseMs = 2 * SHORT_LEASE_MS;
      const store = await open({ leaseMs });
      const reg = registration('renewed');
      expect(await store.heartbeat(reg)).toEqual({ key: keyOf(reg), leaseMs, changed: true });
      const first = (await store.snapshot()).records;
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({ key: keyOf(reg), registration: reg, leaseMs, version: 1 });
      expect(first[0]!.deadlineMs).toBe(first[0]!.renewedAtMs + leaseMs);

      // Renewed every 50 ms and swept in between, it outlives its first deadline twice over.
      const until = Date.now() + 2 * leaseMs;
      while (Date.now() < until) {
        expect((await store.heartbeat(reg)).changed).toBe(false);
        expect((await store.sweep()).lapsed).toBe(0);
        await pause(50);
      }
      const last = (await store.snapshot()).records;
      expect(last.map((r) => r.key)).toEqual([keyOf(reg)]);
      expect(last[0]!.renewedAtMs).toBeGreaterThan(first[0]!.renewedAtMs);
      expect(last[0]!.version).toBe(1);
    });

    it('a sweep tells how long until the soonest deadline it left, on the store clock; nothing held: undefined', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      expect(await store.sweep()).toEqual({ lapsed: 0, nextDueInMs: undefined });
      await store.heartbeat(registration('soonest'));
      const written = performance.now();
      await pause(20);
      await store.heartbeat(registration('later'));
      const sweptFrom = performance.now();
      const { lapsed, nextDueInMs } = await store.sweep();
      expect(lapsed).toBe(0);
      // The first lease's deadline: a lease after it was written, which is at least the time measured
      // here between its reply and the sweep's call (a timer may fire a fraction of a ms early, so the
      // span is measured rather than taken from the pause).
      expect(nextDueInMs).toBeLessThanOrEqual(LONG_LEASE_MS - (sweptFrom - written) + CLOCK_GRAIN_MS);
      expect(nextDueInMs).toBeGreaterThan(LONG_LEASE_MS - 1000);
    });

    it('a sweep that lapses leases tells the soonest deadline left after them', async () => {
      const store = await open({ leaseMs: SHORT_LEASE_MS });
      const shortSent = performance.now();
      await store.heartbeat(registration('short'));
      await pause(SHORT_LEASE_MS / 2);
      await store.heartbeat(registration('renewed'));
      const renewedAnswered = performance.now();
      let result = await store.sweep();
      await eventually(async () => (result = await store.sweep()).lapsed === 1, { what: 'the lapse', timeoutMs: SHORT_LEASE_MS + 1000 });
      // Only `renewed` is left, not yet passed. `short` has lapsed, so the store's clock is past its
      // deadline, and `renewed`'s deadline is at most the span between the two writes after that: about
      // half a lease, bounded by what was measured here around both calls.
      expect(result.nextDueInMs).toBeGreaterThan(0);
      expect(result.nextDueInMs).toBeLessThanOrEqual(renewedAnswered - shortSent + CLOCK_GRAIN_MS);
    });

    it('lapses an unrenewed lease within lease + 1 s and logs the lapse once', async () => {
      const store = await open({ leaseMs: SHORT_LEASE_MS });
      const recorder = record(store, (await store.snapshot()).position);
      const reg = registration('lapsing');
      const registeredAt = Date.now();
      await store.heartbeat(reg);
      await eventually(async () => (await store.sweep()).lapsed === 1, { what: 'the lapse', timeoutMs: SHORT_LEASE_MS + 1000 });
      expect(Date.now() - registeredAt).toBeLessThanOrEqual(SHORT_LEASE_MS + 1000);
      expect((await store.snapshot()).records).toEqual([]);
      expect((await store.sweep()).lapsed).toBe(0);

      const events = await recorder.until((e) => e.length >= 2);
      const [upsert, lapse] = events;
      expect(upsert).toMatchObject({ type: 'upsert', record: { key: keyOf(reg), version: 1 } });
      const deadline = upsert?.type === 'upsert' ? upsert.record.deadlineMs : NaN;
      expect(lapse).toMatchObject({ type: 'lapse', key: keyOf(reg), atMs: deadline });
      await store.heartbeat(registration('marker'));
      expect((await recorder.untilUpsertOf(keyOf(registration('marker')))).map((e) => e.type)).toEqual(['upsert', 'lapse', 'upsert']);
    });

    it('logs lapse then upsert when a pool comes back, swept or not', async () => {
      const store = await open({ leaseMs: SHORT_LEASE_MS });
      const recorder = record(store, (await store.snapshot()).position);
      const unswept = registration('back-before-sweep');
      const swept = registration('back-after-sweep');
      await store.heartbeat(unswept);
      await store.heartbeat(swept);
      const deadline = Math.max(...(await store.snapshot()).records.map((r) => r.deadlineMs));
      await eventually(async () => (await store.snapshot()).nowMs > deadline, { what: 'the deadline', timeoutMs: 2000 });

      // Due but not swept: the heartbeat itself logs the lapse before the new lease.
      expect((await store.heartbeat(unswept)).changed).toBe(true);
      expect((await store.sweep()).lapsed).toBe(1); // only `swept` is still due
      expect((await store.heartbeat(swept)).changed).toBe(true);

      const events = await recorder.until((e) => e.length >= 6);
      const summary = events.map((e) => (e.type === 'lapse' ? `lapse ${e.key}` : `upsert ${e.record.key} v${e.record.version}`));
      const [u, s] = [keyOf(unswept), keyOf(swept)];
      expect(summary).toEqual([`upsert ${u} v1`, `upsert ${s} v1`, `lapse ${u}`, `upsert ${u} v1`, `lapse ${s}`, `upsert ${s} v1`]);
      expect((await store.snapshot()).records.map((r) => r.key).sort()).toEqual([u, s].sort());
    });

    it('logs nothing for a renewal that changes nothing, whatever the order of its keys', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      const reg = registration('steady');
      await store.heartbeat(reg);
      const recorder = record(store, (await store.snapshot()).position);
      const reordered = JSON.parse(
        JSON.stringify({ ...reg, capacity: [{ value: 8, name: 'gpus' }], location: { zone: 'us-east-1a', region: 'us-east-1' } }),
      ) as typeof reg;
      for (const renewal of [reg, reg, reordered]) expect((await store.heartbeat(renewal)).changed).toBe(false);
      const marker = registration('marker');
      await store.heartbeat(marker);
      const events = await recorder.untilUpsertOf(keyOf(marker));
      expect(events.map((e) => (e.type === 'upsert' ? e.record.key : e.key))).toEqual([keyOf(marker)]);
    });

    it('logs one upsert with a bigger version when the content changes', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      await store.heartbeat(registration('changing', 0));
      const recorder = record(store, (await store.snapshot()).position);
      const changed = registration('changing', 1);
      expect((await store.heartbeat(changed)).changed).toBe(true);
      expect((await store.heartbeat(changed)).changed).toBe(false);
      const marker = registration('marker');
      await store.heartbeat(marker);
      const events = await recorder.untilUpsertOf(keyOf(marker));
      expect(events).toHaveLength(2);
      expect(events[0]).toMatchObject({ type: 'upsert', record: { key: keyOf(changed), version: 2, registration: changed } });
      const [snapshotRecord] = (await store.snapshot()).records.filter((r) => r.key === keyOf(changed));
      expect(snapshotRecord).toMatchObject({ version: 2, registration: { model: changed.model } });
    });

    it('takes a version above the highest the writer knew in other regions for a new lease or a changed content, never for a renewal', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      const recorder = record(store, (await store.snapshot()).position);
      // New: one above the version known elsewhere.
      expect((await store.heartbeat(registration('ordered', 0), undefined, 4)).changed).toBe(true);
      // A plain renewal keeps its version, whatever is known elsewhere.
      expect((await store.heartbeat(registration('ordered', 0), undefined, 9)).changed).toBe(false);
      // A change: above both its own version and the one known elsewhere...
      await store.heartbeat(registration('ordered', 1), undefined, 7);
      // ...and above its own when that is the higher.
      await store.heartbeat(registration('ordered', 2), undefined, 3);
      const marker = registration('marker');
      await store.heartbeat(marker);
      const events = await recorder.untilUpsertOf(keyOf(marker));
      const ordered = keyOf(registration('ordered', 0));
      expect(events.filter((e) => e.type === 'upsert' && e.record.key === ordered).map((e) => (e.type === 'upsert' ? e.record.version : 0))).toEqual([5, 8, 9]);
      const [snapshotRecord] = (await store.snapshot()).records.filter((r) => r.key === ordered);
      expect(snapshotRecord).toMatchObject({ version: 9 });
    });

    it('keeps one epoch across snapshots and heartbeats', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      const { epoch } = await store.snapshot();
      expect(epoch).toMatch(/\S/);
      await store.heartbeat(registration('epoch'));
      expect((await store.snapshot()).epoch).toBe(epoch);
    });

    it('follows from the position of an empty snapshot', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      const snapshot = await store.snapshot();
      expect(snapshot.records).toEqual([]);
      const recorder = record(store, snapshot.position);
      const reg = registration('first');
      await store.heartbeat(reg);
      const [event] = await recorder.untilUpsertOf(keyOf(reg));
      expect(event).toMatchObject({ type: 'upsert', record: { key: keyOf(reg), registration: reg, version: 1 } });
    });

    it('ends a watch when its signal aborts', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      const recorder = new WatchRecorder(store, (await store.snapshot()).position);
      // Once it has delivered an event, it is waiting for the next one when the signal aborts.
      const reg = registration('only');
      await store.heartbeat(reg);
      await recorder.untilUpsertOf(keyOf(reg));
      await recorder.stop();
      expect(recorder.ended).toBe(true);
      expect(recorder.error).toBeUndefined();
    });

    it('never misses or doubles an event under concurrent heartbeats and sweeps from several replicas', async () => {
      const replicas = await openReplicas(3, { leaseMs: SHORT_LEASE_MS });
      const [first, second, third] = replicas as [RegistrationStore, RegistrationStore, RegistrationStore];
      const views: ReplayedView[] = [];
      const follow = async (store: RegistrationStore) => {
        const snapshot = await store.snapshot();
        const view = new ReplayedView(snapshot);
        views.push(view);
        return record(store, snapshot.position, (event) => view.apply(event));
      };

      const pools = Array.from({ length: 10 }, (_, i) => `churn-${i}`);
      const churnUntil = Date.now() + 1500;
      // Each replica heartbeats random pools with one of three contents; pools 0-2 fall quiet after a
      // while, so they lapse. Every replica sweeps until just before the heartbeats stop, so nothing
      // changes once they have stopped and every view can be compared with a final snapshot.
      const heartbeats = replicas.map(async (store, r) => {
        while (Date.now() < churnUntil) {
          const i = Math.floor(Math.random() * pools.length);
          const quiet = i < 3 && Date.now() > churnUntil - 900;
          if (!quiet) await store.heartbeat(registration(pools[i]!, Math.floor(Math.random() * 3)));
          if (Math.random() < 0.3) await pause(5 + r);
        }
      });
      const sweeps = replicas.map(async (store) => {
        while (Date.now() < churnUntil - 100) {
          await store.sweep();
          await pause(15);
        }
      });
      const recorders = [await follow(first)];
      await pause(400);
      recorders.push(await follow(second));
      await pause(400);
      recorders.push(await follow(third));
      await Promise.all([...heartbeats, ...sweeps]);

      const marker = registration('marker');
      await first.heartbeat(marker);
      for (const recorder of recorders) await recorder.untilUpsertOf(keyOf(marker));
      const truth = ReplayedView.of(await second.snapshot());
      const live = [...truth.keys()].filter((k) => k.startsWith('us-east-1/llm/churn-'));
      expect(live.length).toBeGreaterThan(0);
      expect(live.filter((k) => /churn-[012]$/.test(k))).toEqual([]);
      // The first view saw the quiet pools lapse.
      expect(views[0]!.lapses).toBeGreaterThan(0);
      for (const view of views) {
        expect(view.applied).toBeGreaterThan(0);
        expect(new Map([...view.pools].sort())).toEqual(new Map([...truth].sort()));
      }
    });

    it('logs each lapse once when two replicas sweep at the same time', async () => {
      const [a, b] = (await openReplicas(2, { leaseMs: SHORT_LEASE_MS })) as [RegistrationStore, RegistrationStore];
      const recorder = record(a, (await a.snapshot()).position);
      const regs = Array.from({ length: 40 }, (_, i) => registration(`swept-${i}`));
      await Promise.all(regs.map((reg, i) => (i % 2 ? a : b).heartbeat(reg)));
      const deadline = Math.max(...(await b.snapshot()).records.map((r) => r.deadlineMs));
      await eventually(async () => (await a.snapshot()).nowMs > deadline, { what: 'every deadline', timeoutMs: 2000 });

      const counts = await Promise.all([a.sweep(), b.sweep(), a.sweep(), b.sweep()]);
      expect(counts.reduce((x, y) => x + y.lapsed, 0)).toBe(regs.length);
      const marker = registration('marker');
      await b.heartbeat(marker);
      const events = await recorder.untilUpsertOf(keyOf(marker));
      const lapses = events.filter((e): e is Extract<LeaseEvent, { type: 'lapse' }> => e.type === 'lapse').map((e) => e.key);
      expect(lapses).toHaveLength(regs.length);
      expect(new Set(lapses)).toEqual(new Set(regs.map(keyOf)));
    });

    it('never returns a lease in a snapshot once its deadline has passed, swept or not', async () => {
      const store = await open({ leaseMs: SHORT_LEASE_MS });
      const gone = registration('run-out');
      await store.heartbeat(gone);
      const [record] = (await store.snapshot()).records;
      expect(record).toMatchObject({ key: keyOf(gone) });
      await eventually(async () => (await store.dueLapses()).length === 1, { what: 'the deadline', timeoutMs: SHORT_LEASE_MS + 1000 });

      // Not swept yet: still due, yet no snapshot holds it any more.
      const unswept = await store.snapshot();
      expect(unswept.nowMs).toBeGreaterThanOrEqual(record!.deadlineMs);
      expect(unswept.records).toEqual([]);
      expect((await store.sweep()).lapsed).toBe(1);
      expect((await store.snapshot()).records).toEqual([]);
    });

    it('lists due lapses on the store clock, soonest first, without lapsing them', async () => {
      const store = await open({ leaseMs: SHORT_LEASE_MS });
      const recorder = record(store, (await store.snapshot()).position);
      expect(await store.dueLapses()).toEqual([]);
      // Named in the order they are registered: equal deadlines are listed by key.
      const [first, second] = [registration('due-a'), registration('due-b')];
      await store.heartbeat(first);
      await store.heartbeat(second);
      const deadlines = new Map((await store.snapshot()).records.map((r) => [r.key, r.deadlineMs]));
      const due = await eventually(async () => {
        const lapses = await store.dueLapses();
        return lapses.length === 2 && lapses;
      }, { what: 'both deadlines', timeoutMs: SHORT_LEASE_MS + 1000 });
      expect(due).toEqual([
        { key: keyOf(first), atMs: deadlines.get(keyOf(first)) },
        { key: keyOf(second), atMs: deadlines.get(keyOf(second)) },
      ]);

      // A fresh lease is not due; a grace longer than the time since the deadlines leaves both out.
      const fresh = registration('fresh');
      await store.heartbeat(fresh);
      expect((await store.dueLapses()).map((lapse) => lapse.key)).toEqual([keyOf(first), keyOf(second)]);
      expect(await store.dueLapses(LONG_LEASE_MS)).toEqual([]);

      // Reading them lapsed nothing: the log holds no lapse, and they stay due until a sweep.
      const marker = registration('marker');
      await store.heartbeat(marker);
      const events = await recorder.untilUpsertOf(keyOf(marker));
      expect(events.map((e) => e.type)).toEqual(['upsert', 'upsert', 'upsert', 'upsert']);
      expect((await store.dueLapses()).map((lapse) => lapse.key)).toEqual([keyOf(first), keyOf(second)]);
      await store.sweep();
      expect((await store.dueLapses()).map((lapse) => lapse.key)).not.toContain(keyOf(first));
    });

    it('dates a registration by its last content change, not its last renewal', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      await store.heartbeat(registration('dated', 0));
      const [created] = (await store.snapshot()).records;
      expect(created!.changedAtMs).toBe(created!.renewedAtMs);
      await eventually(async () => (await store.snapshot()).nowMs > created!.renewedAtMs, { what: 'the clock to move' });

      await store.heartbeat(registration('dated', 0));
      const [renewed] = (await store.snapshot()).records;
      expect(renewed!.renewedAtMs).toBeGreaterThan(created!.renewedAtMs);
      expect(renewed!.changedAtMs).toBe(created!.changedAtMs);

      await store.heartbeat(registration('dated', 1));
      const [changed] = (await store.snapshot()).records;
      expect(changed!.changedAtMs).toBe(changed!.renewedAtMs);
      expect(changed!.changedAtMs).toBeGreaterThan(created!.changedAtMs);
    });

    it('throws PositionLostError once the log was trimmed past the position', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS, changeLogCap: 10 });
      const empty = (await store.snapshot()).position;
      await store.heartbeat(registration('early'));
      const early = (await store.snapshot()).position;
      for (let i = 0; i < 300; i += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, j) => store.heartbeat(registration(`filler-${i + j}`))));
      }
      for (const position of [empty, early]) {
        const recorder = record(store, position);
        await recorder.done;
        expect(recorder.error).toBeInstanceOf(PositionLostError);
        expect(recorder.events).toEqual([]);
      }
      // A fresh snapshot is followed as usual.
      const fresh = await store.snapshot();
      expect(fresh.records).toHaveLength(301);
      const recorder = record(store, fresh.position);
      const late = registration('late');
      await store.heartbeat(late);
      expect((await recorder.untilUpsertOf(keyOf(late))).length).toBe(1);
    });

    it('throws PositionLostError for a position it never gave out', async () => {
      const store = await open({ leaseMs: LONG_LEASE_MS });
      await store.heartbeat(registration('any'));
      for (const position of ['', 'garbage', '99999999999999-0', '99999999']) {
        const recorder = record(store, position);
        await recorder.done;
        expect(recorder.error, `position ${JSON.stringify(position)}`).toBeInstanceOf(PositionLostError);
      }
    });
  });
}
