// What each region's leases do to the pools (docs/design.md "Scale and regions"): a store snapshot
// (applied as it is read, then settled), the change log's events, a followed region's due reads, the
// drop of a region held past its hold, and its return where its log is resumed (the dropped leases put
// back, less those that ran out meanwhile). Every region's feed hands its reads here (RegionFeedSink); the
// pools' machines take them as events and the listed view follows.
import type { PoolKey } from '../contract/index.js';
import type { DueLapse, LeaseEvent, LeaseRecord, StoreSnapshot } from '../store/types.js';
import { DEFAULT_BATCH_SIZE, eachBatch, inBatches } from './batches.js';
import type { ListedView } from './listed-view.js';
import type { PoolDirectory } from './pool-directory.js';
import type { SnapshotReading } from './store-feed.js';

export interface RegionLeasesOptions {
  directory: PoolDirectory;
  view: ListedView;
  /** Pools applied per turn of the event loop (DEFAULT_BATCH_SIZE). */
  batchSize?: number;
  /** A region's hold ran out and each of its pools was dropped. */
  onRegionDropped?: (region: string) => void;
}

export class RegionLeases {
  /** The drop under way for each region being dropped; a snapshot of the region (or stop) ends it. */
  private readonly dropping = new Map<string, symbol>();
  /** Regions whose drop went through, until a snapshot of them settles. */
  private readonly dropped = new Set<string>();
  /**
   * Per dropped region, the leases its drop took from the pools, until the region is read again: a
   * resumed log starts from them (resumed()), a snapshot replaces them. The records the pools held, not
   * copies: a drop adds no memory for as long as the pools' registrations are still referenced elsewhere.
   */
  private readonly kept = new Map<string, HeldLease[]>();
  /** Per region, a snapshot being read (see reading()). */
  private readonly readings = new Map<string, Reading>();
  private readonly batchSize: number;

  constructor(private readonly options: RegionLeasesOptions) {
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  }

  /** Ends every drop under way and forgets which regions were dropped: the join is stopping. */
  stop(): void {
    this.dropping.clear();
    this.dropped.clear();
    this.kept.clear();
  }

  /** One entry of the region's change log: a lapse of a pool this replica never knew is nothing to it. */
  event(region: string, event: LeaseEvent, receipt: number): void {
    if (event.type === 'upsert') {
      this.applyLease(region, event.record, receipt);
    } else {
      this.options.directory.sendIfKnown(event.key, { type: 'LEASE_LAPSED', region });
    }
  }

  private applyLease(region: string, { key, registration, deadlineMs, version, changedAtMs }: HeldLease, receipt: number): void {
    this.options.directory.send(key, { type: 'LEASE_UPSERT', region, registration, deadlineMs, version, changedAtMs, receipt });
  }

  /**
   * A snapshot of a region being read: each lease applied as the read hands it over (a read script's
   * worth, up to 1,000, a turn), published as it is (an `upsert` each, one revision a part: ListedView
   * `group`), so nothing else waits for the read, and a drop meanwhile is a `delete` per pool as ever. A
   * read that fails leaves what it applied (leases live as it began, held like the rest of an unreadable
   * region until a snapshot settles), unless the region is dropped or being dropped: then it drops them
   * again. Only a settled snapshot ends a drop.
   */
  reading(region: string, receipt: number): SnapshotReading {
    const reading: Reading = { handed: new Map<PoolKey, LeaseRecord>(), applied: !this.dropping.has(region) };
    this.readings.set(region, reading);
    return {
      records: (records) =>
        this.options.view.group(() => {
          for (const record of records) {
            reading.handed.set(record.key, record);
            this.applyLease(region, record, receipt);
          }
        }),
      abandon: () => {
        this.readings.delete(region);
        if (this.dropping.has(region) || this.dropped.has(region)) {
          const handed = reading.handed.keys();
          this.options.view.group(() => {
            for (const key of handed) this.options.directory.sendIfKnown(key, { type: 'REGION_DROPPED', region });
          });
        }
      },
    };
  }

  /**
   * A full read of a region: one `LEASE_UPSERT` per lease not applied as it was read, then a lapse for
   * each pool the region no longer holds; in batches, one per turn of the event loop, and one `resync`
   * once all of it is applied. The feed marks the region read (complete) only when this settles.
   */
  async snapshot(region: string, snapshot: StoreSnapshot, holdMissing: boolean, receipt: number): Promise<void> {
    // A drop of this region under way stops here: this read decides the pools it has not reached.
    this.dropping.delete(region);
    this.dropped.delete(region);
    this.kept.delete(region);
    const reading = this.readings.get(region);
    this.readings.delete(region);
    const live = new Set<PoolKey>();
    const size = this.batchSize;
    await this.options.view.batchAsync(async () => {
      await inBatches(snapshot.records, size, (record) => {
        live.add(record.key);
        // The same object as handed over: nothing corrected it since it was applied (unless a drop
        // may have reached it since).
        if (!reading?.applied || reading.handed.get(record.key) !== record) this.applyLease(region, record, receipt);
      });
      // Pools the store no longer holds lapsed meanwhile, unless the store lost its data: then their
      // PoolRelays are still renewing them and hold them until the refill has had one lease. A lease
      // this read handed over and then found gone (a lapse in the log, its deadline passed) lapses.
      const gone: PoolKey[] = [];
      if (holdMissing) {
        for (const key of reading?.handed.keys() ?? []) if (!live.has(key)) gone.push(key);
      } else {
        for (const [key, context] of this.options.directory.contexts()) if (context.leases[region] && !live.has(key)) gone.push(key);
      }
      await inBatches(gone, size, (key) => this.options.directory.send(key, { type: 'LEASE_LAPSED', region }));
    });
  }

  /**
   * The region's log was resumed where it was left, so the pools as they were are still its state up to
   * there: a drop under way ends, and the leases a drop took are put back (one `upsert` each, in batches
   * that yield the event loop), except those `due` names (their deadline passed while the region could
   * not be read: a pool that died meanwhile is not listed again, even for a moment). The log's entries
   * since follow. Leases still held were never taken and are not applied twice.
   */
  async resumed(region: string, receipt: number, due: readonly DueLapse[]): Promise<void> {
    this.dropping.delete(region);
    this.dropped.delete(region);
    const kept = this.kept.get(region);
    this.kept.delete(region);
    if (kept === undefined) return;
    const ranOut = new Set(due.map(({ key }) => key));
    // An `upsert` each, a batch under one revision, as a snapshot's leases are as they are read.
    await eachBatch(kept, this.batchSize, (batch) =>
      this.options.view.group(() => {
        for (const record of batch) {
          if (!ranOut.has(record.key) && !this.options.directory.get(record.key)?.getSnapshot().context.leases[region]) this.applyLease(region, record, receipt);
        }
      }),
    );
  }

  /**
   * Leases of a followed region whose deadline passed on its clock. A lease whose last upsert this replica
   * took after the read was sent (a pool re-registered meanwhile) is not lapsed: the read may predate it,
   * and the next one judges it. Judged by receipt order, never by comparing deadlines: a deadline the
   * store's clock set after a backward step may be lower than an earlier one, and is still the lease's
   * (docs/design.md "Clocks").
   */
  due(region: string, lapses: readonly DueLapse[], sentAfter: number): void {
    for (const { key } of lapses) {
      const lease = this.options.directory.get(key)?.getSnapshot().context.leases[region];
      if (lease && lease.receipt <= sentAfter) this.options.directory.send(key, { type: 'LEASE_LAPSED', region });
    }
  }

  /**
   * The hold ran out: a `delete` per pool that no other region holds, each its own event (watchers see
   * each, not a resync), in batches that yield the event loop (dropping 100,000 pools at once would stall
   * heartbeats and probes for seconds). A snapshot of the region applied meanwhile ends the drop: it
   * decides every pool the drop has not reached. Resolves true when the drop went through.
   */
  async drop(region: string): Promise<boolean> {
    const drop = Symbol(region);
    this.dropping.set(region, drop);
    // What a read under way applied may be dropped now: its settled snapshot applies every lease again.
    const reading = this.readings.get(region);
    if (reading) reading.applied = false;
    const holding: HeldLease[] = [];
    for (const [key, { leases }] of this.options.directory.contexts()) {
      const lease = leases[region];
      if (lease) holding.push({ key, registration: lease.registration, deadlineMs: lease.deadlineMs, version: lease.version, changedAtMs: lease.changedAtMs });
    }
    const current = () => this.dropping.get(region) === drop;
    // A region is dropped once per time it cannot be read: whatever read it last (a snapshot, a resume)
    // took what an earlier drop kept.
    const kept: HeldLease[] = [];
    this.kept.set(region, kept);
    await inBatches(holding, this.batchSize, (record) => {
      if (!current()) return;
      kept.push(record);
      this.options.directory.sendIfKnown(record.key, { type: 'REGION_DROPPED', region });
    });
    if (!current()) return false;
    this.dropping.delete(region);
    this.dropped.add(region);
    this.options.onRegionDropped?.(region);
    return true;
  }
}

/** What a pool holds of a region's lease: what an `upsert` of it is made of. */
type HeldLease = Pick<LeaseRecord, 'key' | 'registration' | 'deadlineMs' | 'version' | 'changedAtMs'>;

/** A snapshot being read: the leases it handed over so far. */
interface Reading {
  handed: Map<PoolKey, LeaseRecord>;
  /** Every lease handed over is applied as it was handed: no drop began before or since. */
  applied: boolean;
}
