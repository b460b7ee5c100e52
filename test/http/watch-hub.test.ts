// The watch fan-out in process (src/http/watch-hub.ts): frames go out at most 500 streams and a few
// milliseconds per turn of the event loop, in order; a stream that joins while a change is still going
// out gets its resync and then only the changes after it, none twice and none lost; a stream that stops
// taking bytes is cut past the limit.
import { describe, expect, it } from 'vitest';
import type { ListedPool } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';
import { WatchHub } from '../../src/http/watch-hub.js';
import { FakeSink } from '../support/fake-watch-sink.js';
import { waitFor } from '../support/wait.js';
import { pool as listedPool } from '../support/listed-pool.js';

/** A frontendless pool `c/ns/<name>`. */
const pool = (name: string): ListedPool => listedPool(name, { cluster_id: 'c', namespace: 'ns', model: 'm', frontends: [], state: 'frontendless' });

describe('WatchHub', () => {
  it('writes in order, 500 streams a turn; a stream joining mid-change gets its resync, then only later changes', async () => {
    const view = new ListedView({ epoch: 1 });
    const hub = new WatchHub({ view, maxWatchers: 5_000, maxBacklogBytes: 1 << 20, keepAliveMs: 60_000 });
    const early = Array.from({ length: 1_200 }, () => new FakeSink());
    for (const sink of early) hub.add(sink);

    view.update('c/ns/one', pool('one'));
    // The first batch has it at once; the rest only after turns of the event loop.
    expect(early[0]!.events()).toEqual(['resync:', 'upsert:one']);
    expect(early[1_199]!.events()).toEqual(['resync:']);

    const late = new FakeSink();
    hub.add(late);
    view.update('c/ns/two', pool('two'));
    await waitFor(() => early.every((s) => s.frames.length === 3) && late.frames.length === 2, { message: 'every frame written' });

    for (const sink of early) expect(sink.events()).toEqual(['resync:', 'upsert:one', 'upsert:two']);
    // Its resync already lists `one` (the view had it when it joined), so `one` is not sent again.
    expect(late.events()).toEqual(['resync:one', 'upsert:two']);
    hub.close();
  });

  it('hands a change to slow streams a few milliseconds a turn, not 500 at once, and to each of them in the end', async () => {
    const view = new ListedView({ epoch: 1 });
    const hub = new WatchHub({ view, maxWatchers: 5_000, maxBacklogBytes: 1 << 20, keepAliveMs: 60_000 });
    const sinks = Array.from({ length: 40 }, () => new FakeSink());
    for (const sink of sinks) hub.add(sink);
    for (const sink of sinks) sink.writeMs = 1;
    const having = () => sinks.filter((s) => s.events().includes('upsert:one')).length;

    view.update('c/ns/one', pool('one'));
    // 1 ms a write: the slice (4 ms) ends after a handful of streams; the rest wait for later turns.
    const first = having();
    expect(first).toBeGreaterThanOrEqual(1);
    expect(first).toBeLessThanOrEqual(8);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(having()).toBeGreaterThan(first);
    expect(having()).toBeLessThan(40);
    await waitFor(() => having() === 40, { message: 'every stream has the change' });
    for (const sink of sinks) expect(sink.events()).toEqual(['resync:', 'upsert:one']);
    hub.close();
  });

  it('cuts a stream whose backlog passes the limit and counts it; the others get every frame', () => {
    const view = new ListedView({ epoch: 1 });
    const dropped: string[] = [];
    // No slice is cut by the clock (sliceMs): every frame goes out in the turn of its change, however slow
    // the machine (under mutation testing's load, 4 ms slices left a third of them for a later turn).
    const hub = new WatchHub({
      view,
      maxWatchers: 10,
      maxBacklogBytes: 2_000,
      keepAliveMs: 60_000,
      sliceMs: 60_000,
      onDropped: (reason) => dropped.push(reason),
    });
    const reader = new FakeSink();
    const stalled = new FakeSink();
    hub.add(reader);
    hub.add(stalled);
    stalled.stalled = true;
    for (let i = 0; i < 40; i++) view.update(`c/ns/p${i}`, pool(`p${i}`));
    expect(stalled.destroyed).toBe(true);
    expect(dropped).toEqual(['backlog']);
    expect(hub.size).toBe(1);
    expect(reader.events().filter((e) => e.startsWith('upsert'))).toHaveLength(40);
    expect(stalled.backlogBytes).toBeLessThan(2_000 + 400);
    hub.close();
  });

  it('refuses nothing itself but reports full at --max-watchers', () => {
    const hub = new WatchHub({ view: new ListedView(), maxWatchers: 2, maxBacklogBytes: 1 << 20, keepAliveMs: 60_000 });
    hub.add(new FakeSink());
    expect(hub.full).toBe(false);
    hub.add(new FakeSink());
    expect(hub.full).toBe(true);
    hub.close();
  });
});
