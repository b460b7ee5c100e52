// Edges of the listed view (docs/contract.md §5, §7): what a relist, a completeness change or a region's
// entry publishes, what the GET /pools body shows after each, and the revision's form.
import { describe, expect, it } from 'vitest';
import { poolKey, type ListedPool, type RegionStatus, type WatchEvent } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';
import { pool } from '../support/listed-pool.js';


function watchedView(epoch = 1734) {
  const view = new ListedView({ epoch });
  const events: WatchEvent[] = [];
  view.subscribe((event) => events.push(structuredClone(event)));
  return { view, events };
}

const body = (view: ListedView, model?: string) => JSON.parse(new TextDecoder().decode(view.body(model)));
const region = (name: string, fields: Partial<RegionStatus> = {}): RegionStatus => ({ name, complete: true, dropped: false, ...fields });

describe('ListedView: revisions', () => {
  it('are <epoch>-<sequence>, starting at 0 and growing by one per published change', () => {
    const { view, events } = watchedView(42);
    expect(view.revision).toBe('42-0');
    view.update('c1/llm/a', pool('a'));
    expect(view.revision).toBe('42-1');
    expect(events[0]).toEqual({ kind: 'upsert', data: { revision: '42-1', pool: pool('a') } });
    view.update('c1/llm/a', null);
    expect(events[1]).toEqual({ kind: 'delete', data: { revision: '42-2', pool: { cluster_id: 'c1', namespace: 'llm', name: 'a' } } });
  });

  it('default to this replica start time in ms and six random digits as the epoch', () => {
    const before = Date.now();
    const epochs = Array.from({ length: 20 }, () => /^(\d{13})(\d{6})-0$/.exec(new ListedView().revision));
    for (const epoch of epochs) {
      expect(Number(epoch![1])).toBeGreaterThanOrEqual(before);
      expect(Number(epoch![1])).toBeLessThanOrEqual(Date.now());
    }
    // Views made in the same millisecond still differ (one chance in a million each that two do not).
    expect(new Set(epochs.map((e) => e![2])).size).toBeGreaterThan(1);
  });

  it('a batch that changed nothing publishes its resync at the same revision', () => {
    const { view, events } = watchedView();
    view.update('c1/llm/a', pool('a'));
    const revision = view.revision;
    view.batch(() => view.update('c1/llm/a', pool('a')));
    expect(events.at(-1)).toMatchObject({ kind: 'resync', data: { revision } });
    expect(view.revision).toBe(revision);
  });

  it('a batch that changed a pool publishes its resync at the next revision, once', () => {
    const { view, events } = watchedView(5);
    view.batch(() => {
      view.update('c1/llm/a', pool('a'));
      view.update('c1/llm/b', pool('b'));
    });
    expect(events).toEqual([{ kind: 'resync', data: { complete: false, revision: '5-1', pools: [pool('a'), pool('b')] } }]);
    // The next batch starts clean: unchanged, it does not move the revision.
    view.batch(() => {});
    expect(view.revision).toBe('5-1');
  });

  it('a batch whose function throws still ends with a resync, and the next change publishes again', () => {
    const { view, events } = watchedView();
    expect(() =>
      view.batch(() => {
        view.update('c1/llm/a', pool('a'));
        throw new Error('relist failed');
      }),
    ).toThrow('relist failed');
    expect(events.map((e) => e.kind)).toEqual(['resync']);
    view.update('c1/llm/b', pool('b'));
    expect(events.map((e) => e.kind)).toEqual(['resync', 'upsert']);
  });
});

describe('ListedView: completeness', () => {
  it('starts incomplete, with the reason "starting"', () => {
    const view = new ListedView({ epoch: 1 });
    expect(view.complete).toBe(false);
    expect(view.reasons).toEqual(['starting']);
    expect(body(view)).toEqual({ complete: false, revision: '1-0', pools: [] });
  });

  it('a change of reasons alone shows in the next body without a resync or a new revision', () => {
    const { view, events } = watchedView(3);
    view.setCompleteness({ complete: false, reasons: ['store: not read yet'] });
    view.setCompleteness({ complete: false, reasons: ['store: not read yet', 'kubernetes: not listed yet'] });
    view.setCompleteness({ complete: false, reasons: ['kubernetes: not listed yet', 'store: not read yet'] });
    expect(view.reasons).toEqual(['kubernetes: not listed yet', 'store: not read yet']);
    expect(events).toEqual([]);
    expect(view.revision).toBe('3-0');
  });

  it('the reasons are copied: changing the caller array changes nothing', () => {
    const view = new ListedView({ epoch: 1 });
    const reasons = ['a'];
    view.setCompleteness({ complete: false, reasons });
    reasons.push('b');
    expect(view.reasons).toEqual(['a']);
  });

  it('regions: a region becoming incomplete or dropped publishes a resync; its reason alone does not', () => {
    const { view, events } = watchedView(9);
    view.setCompleteness({ complete: true, reasons: [], regions: [region('a'), region('b')] });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'resync', data: { complete: true, regions: [region('a'), region('b')] } });

    view.setCompleteness({ complete: true, reasons: [], regions: [region('a'), region('b', { reason: 'slow' })] });
    expect(events).toHaveLength(1);
    expect(body(view).regions).toEqual([region('a'), region('b', { reason: 'slow' })]);

    view.setCompleteness({ complete: true, reasons: [], regions: [region('a'), region('b', { complete: false })] });
    expect(events).toHaveLength(2);
    view.setCompleteness({ complete: true, reasons: [], regions: [region('a'), region('b', { complete: false, dropped: true })] });
    expect(events).toHaveLength(3);
    expect(events[2]).toMatchObject({ kind: 'resync', data: { regions: [region('a'), region('b', { complete: false, dropped: true })] } });
    expect(view.regions).toEqual([region('a'), region('b', { complete: false, dropped: true })]);
  });

  it('without regions, the list and the body have no regions key', () => {
    const view = new ListedView({ epoch: 1 });
    view.setCompleteness({ complete: true, reasons: [] });
    expect(view.regions).toBeUndefined();
    expect('regions' in view.list()).toBe(false);
    expect('regions' in body(view)).toBe(false);
  });
});

describe('ListedView: the cached body', () => {
  it('the body of no filter and of the model "" are different lists', () => {
    const view = new ListedView({ epoch: 1 });
    view.update('c1/llm/a', pool('a'));
    expect(body(view, '').pools).toEqual([]);
    expect(body(view).pools).toEqual([pool('a')]);
    expect(body(view, '').pools).toEqual([]);
  });

  it('a pool changed inside a batch is in the body once the batch ends (one body per revision)', () => {
    const view = new ListedView({ epoch: 1 });
    view.update('c1/llm/a', pool('a'));
    expect(body(view).pools).toHaveLength(1);
    view.batch(() => {
      view.update('c1/llm/a', null);
      expect(body(view).pools).toHaveLength(1);
    });
    expect(body(view).pools).toEqual([]);
  });

  it('many model filters keep their bodies right', () => {
    const view = new ListedView({ epoch: 1 });
    for (let i = 0; i < 80; i += 1) view.update(poolKey({ cluster_id: 'c1', namespace: 'llm', name: `p${i}` }), pool(`p${i}`, { model: `m${i}` }));
    for (let round = 0; round < 2; round += 1) {
      for (let i = 0; i < 80; i += 1) expect(body(view, `m${i}`).pools.map((p: ListedPool) => p.name)).toEqual([`p${i}`]);
    }
    expect(view.size).toBe(80);
  });

  it('counts its subscribers', () => {
    const view = new ListedView({ epoch: 1 });
    const off = view.subscribe(() => {});
    view.subscribe(() => {});
    expect(view.subscriberCount).toBe(2);
    off();
    expect(view.subscriberCount).toBe(1);
  });
});
