// The watch fan-out's slices in process (src/http/watch-hub.ts): at most 500 streams, and at most the
// slice's milliseconds, a turn of the event loop; a resync whose list body is written over several turns
// holds the frames after it, and every stream gets them in order once it is written; a body that cannot
// be written cuts the streams that would miss it (logged), and the hub goes on for the streams after.
// The lists here are written in slices because the view's slice is 0 ms: a yield every 64 entries.
import { describe, expect, it } from 'vitest';
import { ListedView } from '../../src/join/listed-view.js';
import type { ListBody } from '../../src/join/listed-view.js';
import { WatchHub, type WatchableView } from '../../src/http/watch-hub.js';
import { FakeSink } from '../support/fake-watch-sink.js';
import { pool as listedPool } from '../support/listed-pool.js';
import { captureLogs } from '../support/logs.js';
import { waitFor } from '../support/wait.js';

const pool = (name: string) => listedPool(name, { cluster_id: 'c', namespace: 'ns', model: 'm', frontends: [], state: 'frontendless' });
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A view of `count` pools whose unfiltered body takes several turns to write. */
function slicedView(count: number): ListedView {
  const view = new ListedView({ epoch: 1, sliceMs: 0 });
  for (let i = 0; i < count; i++) view.update(`c/ns/p${i}`, pool(`p${i}`));
  view.setCompleteness({ complete: true, reasons: [] });
  return view;
}

/** Each event written, as `kind:<pools in it>` for a resync, `kind:<name>` for an upsert or a delete. */
function shapes(sink: FakeSink): string[] {
  return sink.frames.flatMap((text) =>
    text
      .split('\n\n')
      .filter((block) => block !== '')
      .map((block) => {
        const kind = /^event: (\w+)/m.exec(block)?.[1] ?? block;
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data === undefined) return kind;
        const parsed = JSON.parse(data) as { pools?: unknown[] };
        return `${kind}:${parsed.pools !== undefined ? parsed.pools.length : /"name":"([^"]+)"/.exec(data)?.[1]}`;
      }),
  );
}

/** The view as the hub sees it, with a body that fails to be written where a test asks for it. */
function failingView(view: ListedView, fail: { first?: boolean; current?: boolean }): WatchableView {
  const failed = (body: ListBody): ListBody => ({ ...body, ready: undefined, bytes: Promise.reject(new Error('the body could not be written')) });
  return {
    get revision() {
      return view.revision;
    },
    sequenceOf: (revision) => view.sequenceOf(revision),
    subscribe: (listener) => view.subscribe(listener),
    listBody: () => (fail.first ? failed(view.listBody()) : view.listBody()),
    currentBody: () => (fail.current ? failed(view.currentBody()) : view.currentBody()),
  };
}

const hubOptions = { maxWatchers: 5_000, maxBacklogBytes: 1 << 24, keepAliveMs: 60_000 };

/** A sink that also keeps each write as it was handed over (the hub's frames are shared, never copied). */
class RawSink extends FakeSink {
  readonly raw: Uint8Array[] = [];
  override write(frame: Uint8Array): void {
    this.raw.push(frame);
    super.write(frame);
  }
}

describe('WatchHub slices', () => {
  it('writes a change to exactly 500 streams a turn when the time slice is long enough', async () => {
    const view = new ListedView({ epoch: 1 });
    const hub = new WatchHub({ view, ...hubOptions, sliceMs: 60_000 });
    const sinks = Array.from({ length: 1_200 }, () => new FakeSink());
    for (const sink of sinks) hub.add(sink);
    const having = () => sinks.filter((s) => s.frames.some((f) => f.startsWith('event: upsert'))).length;

    view.update('c/ns/one', pool('one'));
    expect(having()).toBe(500);
    // A change published meanwhile waits for its turn: it starts no second writer in this one.
    view.update('c/ns/two', pool('two'));
    expect(having()).toBe(500);
    expect(sinks.some((s) => s.frames.some((f) => f.includes('"name":"two"')))).toBe(false);
    // A stream that joins now, while `two` waits its turn: its resync holds both, so neither is sent to it.
    const late = new FakeSink();
    hub.add(late);
    await turn();
    expect(having()).toBe(1_000);
    await turn();
    expect(having()).toBe(1_200);
    // In the order the streams joined, and the second change after the first on each.
    await waitFor(() => sinks.every((s) => s.frames.length === 3), { message: 'the second change everywhere' });
    for (const sink of sinks) expect(shapes(sink)).toEqual(['resync:0', 'upsert:one', 'upsert:two']);
    expect(shapes(late)).toEqual(['resync:2']);
    hub.close();
  });

  it('with a slice of 0 ms, writes a change to one stream a turn', async () => {
    const view = new ListedView({ epoch: 1 });
    const hub = new WatchHub({ view, ...hubOptions, sliceMs: 0 });
    const sinks = Array.from({ length: 3 }, () => new FakeSink());
    for (const sink of sinks) hub.add(sink);
    const having = () => sinks.filter((s) => s.frames.length === 2).length;

    view.update('c/ns/one', pool('one'));
    expect(having()).toBe(1);
    await turn();
    expect(having()).toBe(2);
    await turn();
    expect(having()).toBe(3);
    hub.close();
  });

  it('a first resync written over several turns: the stream gets it, then the changes made meanwhile, once each', async () => {
    const view = slicedView(500);
    const hub = new WatchHub({ view, ...hubOptions });
    const sink = new FakeSink();
    hub.add(sink);
    // Not in this turn: the body is still being written.
    expect(sink.frames).toEqual([]);
    view.update('c/ns/new', pool('new'));
    await waitFor(() => sink.frames.length >= 1, { message: 'the resync' });
    await turn();
    // One write: the body of the revision it was written for, and the change after it.
    expect(sink.frames).toHaveLength(1);
    expect(shapes(sink)).toEqual(['resync:500', 'upsert:new']);
    hub.close();
  });

  it('a resync written over several turns holds the frames after it; every stream gets them in order', async () => {
    const view = slicedView(500);
    const hub = new WatchHub({ view, ...hubOptions });
    const sinks = [new FakeSink(), new FakeSink()];
    for (const sink of sinks) hub.add(sink);
    await waitFor(() => sinks.every((s) => s.frames.length === 1), { message: 'the first resyncs' });

    // Incomplete again: a resync of the 500 pools, its body written in slices; then a change behind it.
    view.setCompleteness({ complete: false, reasons: ['store_unreachable'] });
    view.update('c/ns/new', pool('new'));
    // The change waits for the resync before it, on every stream.
    expect(sinks.map((s) => s.frames.length)).toEqual([1, 1]);
    await waitFor(() => sinks.every((s) => s.frames.length === 3), { message: 'the resync, then the change' });
    for (const sink of sinks) {
      expect(shapes(sink)).toEqual(['resync:500', 'resync:500', 'upsert:new']);
      expect(sink.frames[1]).toContain('"complete":false');
    }
    // Nothing more once the pump is idle: a later change goes out as usual.
    view.update('c/ns/later', pool('later'));
    await waitFor(() => sinks.every((s) => s.frames.length === 4), { message: 'a later change' });
    expect(shapes(sinks[0]!).at(-1)).toBe('upsert:later');
    hub.close();
  });

  it('a stream that leaves, or a hub closed, while its first resync is written gets nothing more', async () => {
    const view = slicedView(500);
    const hub = new WatchHub({ view, ...hubOptions });
    const leaving = new FakeSink();
    const staying = new FakeSink();
    hub.add(leaving);
    hub.add(staying);
    leaving.end();
    await waitFor(() => staying.frames.length === 1, { message: "the staying stream's resync" });
    await turn();
    expect(leaving.frames).toEqual([]);
    expect(hub.size).toBe(1);

    // A change, so the body is written anew for the late stream: the hub closes meanwhile.
    view.update('c/ns/new', pool('new'));
    const late = new FakeSink();
    hub.add(late);
    expect(late.frames).toEqual([]);
    hub.close();
    await turn();
    await turn();
    expect(late.frames).toEqual([]);
  });

  it('a first resync older than the replay window is left for a newer one', async () => {
    const view = slicedView(500);
    const hub = new WatchHub({ view, ...hubOptions, replayWindow: 1 });
    const sink = new FakeSink();
    hub.add(sink);
    // Two changes while the body of 500 is written: the window keeps one, so that body cannot be followed.
    view.update('c/ns/a', pool('a'));
    view.update('c/ns/b', pool('b'));
    await waitFor(() => sink.frames.length >= 1, { message: 'a resync' });
    await turn();
    expect(shapes(sink)).toEqual(['resync:502']);
    expect(sink.destroyed).toBe(false);
    hub.close();
  });

  it('a resync body that cannot be written cuts every stream, logged; the streams after it are served', async () => {
    const view = new ListedView({ epoch: 1 });
    view.update('c/ns/one', pool('one'));
    const fail = { current: true };
    const logs = captureLogs();
    const hub = new WatchHub({ view: failingView(view, fail), ...hubOptions, logger: logs.logger });
    const sinks = [new FakeSink(), new FakeSink()];
    for (const sink of sinks) hub.add(sink);
    expect(sinks.map((s) => s.frames.length)).toEqual([1, 1]);

    view.setCompleteness({ complete: true, reasons: [] });
    view.update('c/ns/two', pool('two'));
    await waitFor(() => sinks.every((s) => s.destroyed), { message: 'every stream cut' });
    expect(hub.size).toBe(0);
    const errors = logs.lines.filter((line) => line.msg === 'watch streams: a resync could not be written');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ level: 50, err: { message: 'the body could not be written' } });
    // Neither the failed resync nor the change behind it reached a stream that was cut.
    for (const sink of sinks) expect(shapes(sink)).toEqual(['resync:1']);

    fail.current = false;
    const next = new FakeSink();
    hub.add(next);
    view.update('c/ns/three', pool('three'));
    await waitFor(() => next.frames.length === 2, { message: 'a new stream served' });
    expect(shapes(next)).toEqual(['resync:2', 'upsert:three']);
    hub.close();
  });

  it('without a logger, a body that cannot be written still cuts the streams', async () => {
    const view = new ListedView({ epoch: 1 });
    const first = new WatchHub({ view: failingView(view, { first: true }), ...hubOptions });
    const cut = new FakeSink();
    first.add(cut);
    const fail = { current: false };
    const later = new WatchHub({ view: failingView(view, fail), ...hubOptions });
    const open = new FakeSink();
    later.add(open);
    fail.current = true;
    view.setCompleteness({ complete: true, reasons: [] });
    await waitFor(() => cut.destroyed && open.destroyed, { message: 'both streams cut' });
    first.close();
    later.close();
  });

  it('an unknown Last-Event-ID starts with a resync', () => {
    const view = new ListedView({ epoch: 1 });
    view.update('c/ns/one', pool('one'));
    const hub = new WatchHub({ view, ...hubOptions });
    const sink = new FakeSink();
    expect(hub.add(sink, '7-1')).toBe(false);
    expect(shapes(sink)).toEqual(['resync:1']);
    hub.close();
  });

  it("a first resync that cannot be written cuts that stream, logged with its peer", async () => {
    const view = new ListedView({ epoch: 1 });
    const logs = captureLogs();
    const hub = new WatchHub({ view: failingView(view, { first: true }), ...hubOptions, logger: logs.logger });
    const sink = new FakeSink();
    hub.add(sink);
    await waitFor(() => sink.destroyed, { message: 'the stream cut' });
    expect(sink.frames).toEqual([]);
    expect(hub.size).toBe(0);
    const errors = logs.lines.filter((line) => line.msg === 'watch stream: first resync failed');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ level: 50, peer: 'fake', err: { message: 'the body could not be written' } });
    hub.close();
  });
  it('frames a body once: streams that start with the same body are handed the same bytes', async () => {
    const view = new ListedView({ epoch: 1 });
    view.update('c/ns/one', pool('one'));
    const hub = new WatchHub({ view, ...hubOptions });
    const [a, b] = [new RawSink(), new RawSink()];
    hub.add(a);
    hub.add(b);
    // `retry:`, then the resync: one object, framed once.
    expect(a.raw).toHaveLength(2);
    expect(b.raw[1]).toBe(a.raw[1]);
    hub.close();
  });

  it('writes no body for a resync while no stream is open', () => {
    const view = new ListedView({ epoch: 1 });
    view.update('c/ns/one', pool('one'));
    const hub = new WatchHub({ view, ...hubOptions });
    const before = view.serializations;
    view.setCompleteness({ complete: true, reasons: [] });
    expect(view.serializations).toBe(before);
    hub.close();
  });

  it('resumes a stream whose missed frames are exactly the backlog limit; one byte less and it gets a resync', () => {
    const view = new ListedView({ epoch: 1 });
    const options = { view, ...hubOptions };
    const hub = new WatchHub(options);
    const from = view.revision;
    view.update('c/ns/a', pool('a'));
    view.update('c/ns/b', pool('b'));
    const probe = new RawSink();
    expect(hub.add(probe, from)).toBe(true);
    // `retry:`, then the resumed changes as one write.
    const missed = probe.raw[1]!.byteLength;
    expect(shapes(probe)).toEqual([': resumed', 'upsert:a', 'upsert:b']);

    options.maxBacklogBytes = missed;
    const exact = new RawSink();
    expect(hub.add(exact, from)).toBe(true);
    expect(exact.raw[1]!.byteLength).toBe(missed);
    options.maxBacklogBytes = missed - 1;
    const over = new RawSink();
    expect(hub.add(over, from)).toBe(false);
    expect(shapes(over)).toEqual(['resync:2']);
    hub.close();
  });

  it('close() twice is close() once', () => {
    const view = new ListedView({ epoch: 1 });
    const hub = new WatchHub({ view, ...hubOptions });
    const sink = new FakeSink();
    hub.add(sink);
    hub.close();
    expect(() => hub.close()).not.toThrow();
    expect(hub.size).toBe(0);
  });
});
