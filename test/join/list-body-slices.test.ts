// The GET /pools body written in slices (src/join/list-body.ts, docs/contract.md §5 "Which revision a
// reply holds"): the bytes are exactly JSON.stringify of the list; a large list gives the event loop
// turns while it is written; a reply asked for while a body is written is that body (its revision, whole)
// even after a change, and the next reply is the newer revision; a watch stream that joins while the
// body is written gets it, then the changes made meanwhile, and misses none.
import { describe, expect, it } from 'vitest';
import { driveNow, writeListBody, type ListEntry } from '../../src/join/list-body.js';
import { ListedView } from '../../src/join/listed-view.js';
import { WatchHub } from '../../src/http/watch-hub.js';
import { unchunk } from '../../src/http/sse.js';
import type { WatchSink } from '../../src/http/watch-sink.js';
import type { ListedPool } from '../../src/contract/index.js';
import { pool } from '../support/listed-pool.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const name = (i: number) => `p-${String(i).padStart(5, '0')}`;

function entry(p: ListedPool): ListEntry<ListedPool> {
  const json = JSON.stringify(p);
  return { key: `c1/llm/${p.name}`, pool: p, bytes: Buffer.byteLength(json) };
}

/** A view of `n` pools (not in key order), written a few entries per slice. */
function viewOf(n: number): ListedView {
  const view = new ListedView({ epoch: 5, sliceMs: 0 });
  for (let i = n - 1; i >= 0; i -= 1) view.update(`c1/llm/${name(i)}`, pool(name(i), { model: `m${i % 3}` }));
  return view;
}

describe('writeListBody', () => {
  it('refuses an entry whose JSON no longer has the length it was stored with (never a torn body)', () => {
    const p = pool(name(1));
    const stored = { ...entry(p), bytes: Buffer.byteLength(JSON.stringify(p)) - 1 };
    expect(() => driveNow(writeListBody('[', [stored], ']', 0))).toThrow(/changed after it was stored/);
    expect(text(driveNow(writeListBody('[', [entry(p)], ']', 0)))).toBe(`[${JSON.stringify(p)}]`);
  });

  it('writes exactly JSON.stringify of the list (non-ASCII included), yielding between slices', () => {
    const pools = Array.from({ length: 1000 }, (_, i) => pool(name(i), { model: i % 2 ? 'modèle-é' : 'm', location: { zone: '東京-1a' } }));
    const head = '{"complete":true,"revision":"5-1","pools":[';
    const tail = '],"regions":[]}';
    const writer = writeListBody(head, pools.map(entry), tail, 0);
    let yields = 0;
    let step = writer.next();
    while (!step.done) {
      yields += 1;
      step = writer.next();
    }
    expect(text(step.value)).toBe(JSON.stringify({ complete: true, revision: '5-1', pools, regions: [] }));
    // With no time allowed per slice, it yields after every 64th entry but the last: 15 times for 1,000.
    expect(yields).toBe(15);
    // With a whole minute allowed, a thousand entries are one slice.
    const patient = writeListBody(head, pools.map(entry), tail, 60_000);
    expect(patient.next().done).toBe(true);
    const empty = writeListBody('{"pools":[', [], ']}', 0).next();
    expect(empty.done && text(empty.value)).toBe('{"pools":[]}');
  });
});

describe('ListedView: a body written over several turns', () => {
  it('keeps the pools sorted change by change, as the list it writes', () => {
    const view = viewOf(300);
    view.update('c1/llm/p-00150', null);
    view.update('c1/llm/a-first', pool('a-first'));
    view.update('c1/llm/p-00007', pool('p-00007', { model: 'changed' }));
    const names = view.list().pools.map((p) => p.name);
    expect(names).toEqual([...names].sort());
    expect(names).toHaveLength(300);
    expect(names[0]).toBe('a-first');
    expect(names).not.toContain('p-00150');
    expect(view.list().pools.find((p) => p.name === 'p-00007')!.model).toBe('changed');
    expect(JSON.parse(text(view.body()))).toEqual(JSON.parse(JSON.stringify(view.list())));
    // A relist that drops, adds and changes pools: sorted again once, afterwards.
    view.batch(() => {
      for (let i = 0; i < 100; i += 1) view.update(`c1/llm/${name(i)}`, null);
      view.update('c1/llm/m-middle', pool('m-middle'));
      view.update('c1/llm/p-00200', pool('p-00200', { model: 'relisted' }));
    });
    const relisted = view.list().pools;
    expect(relisted.map((p) => p.name)).toEqual([...relisted.map((p) => p.name)].sort());
    expect(relisted).toHaveLength(201);
    expect(relisted[1]!.name).toBe('m-middle');
    expect(relisted.find((p) => p.name === 'p-00200')!.model).toBe('relisted');
  });

  it('answers the body being written, whole, until it is done, even after a change; then the newer revision', async () => {
    const view = viewOf(2000);
    const first = view.encoded(undefined, 'identity');
    let written = false;
    void first.bytes.then(() => (written = true));
    await nextTurn();
    expect(written).toBe(false);
    // A change while the body is written: the reply asked for now is still the one being written.
    view.update('c1/llm/p-00000', null);
    expect(view.revision).toBe('5-2001');
    const during = view.encoded(undefined, 'identity');
    expect(during.etag).toBe(first.etag);
    expect(view.etag(undefined, 'identity')).toBe(first.etag);
    const body = JSON.parse(text(await during.bytes)) as { revision: string; pools: ListedPool[] };
    expect(body.revision).toBe('5-2000');
    expect(body.pools).toHaveLength(2000);
    expect(body.pools[0]!.name).toBe('p-00000');
    // Written: the next reply is the current revision, without the pool deleted meanwhile.
    const next = view.encoded(undefined, 'identity');
    expect(next.etag).not.toBe(first.etag);
    const after = JSON.parse(text(await next.bytes)) as { revision: string; pools: ListedPool[] };
    expect(after.revision).toBe('5-2001');
    expect(after.pools.map((p) => p.name)).not.toContain('p-00000');
    expect(after.pools).toHaveLength(1999);
  });

  it('compresses the body being written once it is written', async () => {
    const view = new ListedView({ epoch: 5, sliceMs: 0, compress: async (_coding, bytes) => new Uint8Array(bytes.subarray(0, 10)) });
    for (let i = 0; i < 1000; i += 1) view.update(`c1/llm/${name(i)}`, pool(name(i)));
    const gz = view.encoded(undefined, 'gzip');
    expect(text(await gz.bytes)).toBe('{"complete');
    expect(view.compressions).toBe(1);
  });
});

/** A sink that keeps the events after the stream's `retry:`, as `kind:id:name`. */
class Sink implements WatchSink {
  readonly events: string[] = [];
  backlogBytes = 0;
  readonly peer = 'test';
  private readonly closers: (() => void)[] = [];
  write(frame: Uint8Array): void {
    for (const block of text(unchunk(frame)).split('\n\n')) {
      if (block === '' || block.startsWith('retry:') || block.startsWith(':')) continue;
      const kind = /^event: (\w+)/.exec(block)?.[1];
      const id = /\nid: (\S+)/.exec(block)?.[1];
      const data = JSON.parse(/\ndata: (.*)$/s.exec(block)![1]!) as { pools?: unknown[]; pool?: { name: string } };
      this.events.push(kind === 'resync' ? `resync:${id}:${data.pools!.length}` : `${kind}:${id}:${data.pool!.name}`);
    }
  }
  onClose(listener: () => void): void {
    this.closers.push(listener);
  }
  end(): void {
    this.closers.forEach((f) => f());
  }
  destroy(): void {
    this.end();
  }
}

describe('WatchHub: a first resync written over several turns', () => {
  it('is followed at once by the changes made while it was written, and then by every later one', async () => {
    const view = viewOf(2000);
    const hub = new WatchHub({ view, maxWatchers: 10, maxBacklogBytes: 64 << 20, keepAliveMs: 60_000 });
    const sink = new Sink();
    expect(hub.add(sink)).toBe(false);
    expect(sink.events).toEqual([]);
    view.update('c1/llm/zz-new', pool('zz-new'));
    view.update('c1/llm/p-00001', null);
    for (let i = 0; i < 200 && sink.events.length === 0; i += 1) await nextTurn();
    expect(sink.events).toEqual(['resync:5-2000:2000', 'upsert:5-2001:zz-new', 'delete:5-2002:p-00001']);
    view.update('c1/llm/zz-later', pool('zz-later'));
    for (let i = 0; i < 20 && sink.events.length < 4; i += 1) await nextTurn();
    expect(sink.events.slice(3)).toEqual(['upsert:5-2003:zz-later']);
    hub.close();
  });

  it('is written again when a resync came while it was written (the replay cannot skip a resync)', async () => {
    const view = viewOf(2000);
    const hub = new WatchHub({ view, maxWatchers: 10, maxBacklogBytes: 64 << 20, keepAliveMs: 60_000 });
    const sink = new Sink();
    hub.add(sink);
    view.batch(() => view.update('c1/llm/p-00002', null));
    for (let i = 0; i < 400 && sink.events.length === 0; i += 1) await nextTurn();
    expect(sink.events).toEqual(['resync:5-2001:1999']);
    hub.close();
  });

  it('sends a resync event of a large list as the view writes it, the changes after it in order', async () => {
    const view = viewOf(2000);
    const hub = new WatchHub({ view, maxWatchers: 10, maxBacklogBytes: 64 << 20, keepAliveMs: 60_000 });
    const sink = new Sink();
    hub.add(sink);
    for (let i = 0; i < 400 && sink.events.length === 0; i += 1) await nextTurn();
    expect(sink.events).toEqual(['resync:5-2000:2000']);
    // A relist: its resync is written over several turns; the change after it waits for it.
    view.batch(() => view.update('c1/llm/p-00003', null));
    view.update('c1/llm/zz-after', pool('zz-after'));
    expect(sink.events).toHaveLength(1);
    for (let i = 0; i < 400 && sink.events.length < 3; i += 1) await nextTurn();
    expect(sink.events).toEqual(['resync:5-2000:2000', 'resync:5-2001:1999', 'upsert:5-2002:zz-after']);
    hub.close();
  });
});
