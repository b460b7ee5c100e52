// The listed view (docs/contract.md §5): upsert/delete per change with growing revisions, one resync per
// relist or completeness change, the GET /pools body cached per revision, the ?model filter.
import { describe, expect, it } from 'vitest';
import { poolKey, type ListedPool, type WatchEvent } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';
import { pool } from '../support/listed-pool.js';

const keyOf = (p: ListedPool) => poolKey(p);

/** The sequence number of a revision `<epoch>-<seq>`, to compare revisions as numbers. */
function seqOf(revision: string): number {
  const match = /^(\d+)-(\d+)$/.exec(revision);
  if (!match) throw new Error(`unexpected revision ${revision}`);
  return Number(match[2]);
}

function watchedView() {
  const view = new ListedView({ epoch: 1734 });
  const events: WatchEvent[] = [];
  view.subscribe((event) => events.push(structuredClone(event)));
  return { view, events };
}


/** GET /pools' cached body, decoded. */
function parseBody(body: Uint8Array): any {
  return JSON.parse(new TextDecoder().decode(body));
}

describe('ListedView', () => {
  it('publishes upsert and delete with a revision that grows with every change', () => {
    const { view, events } = watchedView();
    const a = pool('a');
    const b = pool('b');
    view.update(keyOf(a), a);
    view.update(keyOf(b), b);
    view.update(keyOf(a), { ...a, frontends: ['http://10.0.0.2:8000'] });
    view.update(keyOf(b), null);

    expect(events.map((e) => e.kind)).toEqual(['upsert', 'upsert', 'upsert', 'delete']);
    const revisions = events.map((e) => e.data.revision);
    for (let i = 1; i < revisions.length; i += 1) expect(seqOf(revisions[i]!)).toBeGreaterThan(seqOf(revisions[i - 1]!));
    expect(revisions.at(-1)).toBe(view.revision);
    expect(revisions.every((r) => r.startsWith('1734-'))).toBe(true);
    expect(events[2]).toMatchObject({ kind: 'upsert', data: { pool: { name: 'a', frontends: ['http://10.0.0.2:8000'] } } });
    // A delete names the pool only.
    expect(events[3]).toEqual({ kind: 'delete', data: { revision: view.revision, pool: { cluster_id: 'c1', namespace: 'llm', name: 'b' } } });
    expect(view.list().pools.map((p) => p.name)).toEqual(['a']);
  });

  it('publishes nothing for an identical update or the delete of an unknown pool', () => {
    const { view, events } = watchedView();
    const a = pool('a');
    view.update(keyOf(a), a);
    const revision = view.revision;
    view.update(keyOf(a), { ...a }); // equal content, new object
    view.update(poolKey({ cluster_id: 'c1', namespace: 'llm', name: 'never' }), null);
    expect(events).toHaveLength(1);
    expect(view.revision).toBe(revision);
  });

  it('publishes a change that keeps the JSON its length, in the event and the body', () => {
    const { view, events } = watchedView();
    const a = pool('a', { frontends: ['http://10.0.0.1:8000'] });
    const moved = { ...a, frontends: ['http://10.0.0.2:8000'] };
    expect(JSON.stringify(moved)).toHaveLength(JSON.stringify(a).length);
    view.update(keyOf(a), a);
    view.body();
    view.update(keyOf(a), moved);
    expect(events.map((e) => e.kind)).toEqual(['upsert', 'upsert']);
    expect(events[1]).toMatchObject({ kind: 'upsert', data: { pool: { frontends: ['http://10.0.0.2:8000'] } } });
    expect(parseBody(view.body()).pools[0].frontends).toEqual(['http://10.0.0.2:8000']);
  });

  it('a batch publishes exactly one resync and no per-pool events', () => {
    const { view, events } = watchedView();
    const [a, b, c] = [pool('a'), pool('b'), pool('c')];
    view.update(keyOf(a), a);
    view.update(keyOf(b), b);
    events.length = 0;
    const before = view.revision;

    view.batch(() => {
      view.update(keyOf(a), null); // removed inside the batch: leaves only through the resync
      view.update(keyOf(b), { ...b, model: 'model-b' });
      view.update(keyOf(c), c);
    });

    expect(events).toHaveLength(1);
    const resync = events[0]!;
    expect(resync.kind).toBe('resync');
    if (resync.kind !== 'resync') return;
    expect(resync.data.pools.map((p) => p.name)).toEqual(['b', 'c']);
    expect(resync.data.pools[0]!.model).toBe('model-b');
    expect(resync.data.revision).toBe(view.revision);
    expect(seqOf(view.revision)).toBeGreaterThan(seqOf(before));
    expect(events.some((e) => e.kind === 'delete')).toBe(false);
  });

  it('nested batches publish one resync, at the end of the outermost', () => {
    const { view, events } = watchedView();
    view.batch(() => {
      view.batch(() => view.update(keyOf(pool('a')), pool('a')));
      expect(events).toHaveLength(0);
      view.update(keyOf(pool('b')), pool('b'));
    });
    expect(events.map((e) => e.kind)).toEqual(['resync']);
  });

  it('a change of completeness publishes a resync; a change of reasons alone does not', () => {
    const { view, events } = watchedView();
    expect(view.complete).toBe(false);
    view.setCompleteness({ complete: false, reasons: ['store: not read yet', 'kubernetes: not listed yet'] });
    expect(events).toHaveLength(0);
    expect(view.reasons).toEqual(['store: not read yet', 'kubernetes: not listed yet']);

    view.setCompleteness({ complete: true, reasons: [] });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'resync', data: { complete: true, revision: view.revision } });

    view.setCompleteness({ complete: true, reasons: [] });
    expect(events).toHaveLength(1);
    view.setCompleteness({ complete: false, reasons: ['store cannot be read: timeout'] });
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ kind: 'resync', data: { complete: false } });
    expect(seqOf(events[1]!.data.revision)).toBeGreaterThan(seqOf(events[0]!.data.revision));
  });

  it('caches the body per revision and serializes it again after a change', () => {
    const view = new ListedView({ epoch: 7 });
    view.setCompleteness({ complete: true, reasons: [] });
    const a = pool('a');
    view.update(keyOf(a), a);
    const first = view.body();
    expect(view.body()).toBe(first); // the same bytes, not a new serialization
    expect(parseBody(first)).toEqual({ complete: true, revision: view.revision, pools: [a] });

    view.update(keyOf(a), { ...a, state: 'frontendless', frontends: [] });
    const second = view.body();
    expect(second).not.toBe(first);
    expect(parseBody(second)).toMatchObject({ revision: view.revision, pools: [{ name: 'a', state: 'frontendless', frontends: [] }] });

    view.setCompleteness({ complete: false, reasons: ['x'] });
    expect(parseBody(view.body())).toMatchObject({ complete: false });
  });

  it('reflects a batch in the body once the batch ends', () => {
    const view = new ListedView({ epoch: 7 });
    view.update(keyOf(pool('a')), pool('a'));
    const before = view.body();
    view.batch(() => view.update(keyOf(pool('a')), null));
    expect(parseBody(view.body())).toMatchObject({ revision: view.revision, pools: [] });
    expect(view.body()).not.toBe(before);
  });

  it('filters by model, in the list and in the cached body', () => {
    const view = new ListedView({ epoch: 7 });
    const [a, b, c] = [pool('a', { model: 'm1' }), pool('b', { model: 'm2' }), pool('c', { model: 'm1' })];
    for (const p of [c, b, a]) view.update(keyOf(p), p);
    expect(view.list('m1').pools.map((p) => p.name)).toEqual(['a', 'c']);
    expect(parseBody(view.body('m2')).pools.map((p: ListedPool) => p.name)).toEqual(['b']);
    expect(parseBody(view.body('none')).pools).toEqual([]);
    expect(parseBody(view.body()).pools.map((p: ListedPool) => p.name)).toEqual(['a', 'b', 'c']);
    expect(view.body('m1')).toBe(view.body('m1'));

    view.update(keyOf(b), { ...b, model: 'm1' });
    expect(parseBody(view.body('m1')).pools.map((p: ListedPool) => p.name)).toEqual(['a', 'b', 'c']);
    expect(parseBody(view.body('m2')).pools).toEqual([]);
  });

  it('stops publishing to an unsubscribed listener', () => {
    const view = new ListedView();
    const seen: WatchEvent[] = [];
    const unsubscribe = view.subscribe((e) => seen.push(e));
    expect(view.subscriberCount).toBe(1);
    unsubscribe();
    expect(view.subscriberCount).toBe(0);
    view.update(keyOf(pool('a')), pool('a'));
    expect(seen).toEqual([]);
  });
});
