// ListedView.batchAsync: a relist applied over several turns of the event loop (a large store snapshot)
// publishes nothing pool by pool, and one resync when it settles, as a batch does. ListedView.group: many
// changes at once (a snapshot's part as read), each still published, under one revision.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { poolKey, type WatchEvent } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';
import { pool } from '../support/listed-pool.js';

const keyOf = (name: string) => poolKey(pool(name));

describe('ListedView.batchAsync', () => {
  it('publishes one resync at the next revision after every turn of the batch, nothing before', async () => {
    const view = new ListedView({ epoch: 7 });
    const events: WatchEvent[] = [];
    view.subscribe((event) => events.push(event));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const applied = view.batchAsync(async () => {
      view.update(keyOf('a'), pool('a'));
      await held;
      view.update(keyOf('b'), pool('b'));
    });
    await nextTurn();
    expect(events).toEqual([]);
    expect(view.size).toBe(1);
    release();
    await applied;
    expect(events).toHaveLength(1);
    expect(events[0]!.kind).toBe('resync');
    expect(view.revision).toBe('7-1');
    expect(events[0]!.data).toMatchObject({ revision: '7-1', pools: [pool('a'), pool('b')] });

    // After it, a change publishes on its own again.
    view.update(keyOf('a'), null);
    expect(events.at(-1)).toMatchObject({ kind: 'delete', data: { revision: '7-2' } });
  });

  it('holds a synchronous batch inside it, and ends with a resync when its function rejects', async () => {
    const view = new ListedView({ epoch: 1 });
    const events: WatchEvent[] = [];
    view.subscribe((event) => events.push(event));
    await expect(
      view.batchAsync(async () => {
        view.batch(() => view.update(keyOf('a'), pool('a')));
        await nextTurn();
        throw new Error('read failed');
      }),
    ).rejects.toThrow('read failed');
    expect(events.map((e) => e.kind)).toEqual(['resync']);
    expect(view.revision).toBe('1-1');
  });

  it('a batch that changed nothing resyncs at the same revision', async () => {
    const view = new ListedView({ epoch: 1 });
    const events: WatchEvent[] = [];
    view.subscribe((event) => events.push(event));
    await view.batchAsync(async () => {
      await nextTurn();
    });
    expect(events).toEqual([{ kind: 'resync', data: expect.objectContaining({ revision: '1-0', pools: [] }) }]);
  });
});

describe('ListedView.batchAsync: the body', () => {
  it('stays the body of the revision until the batch ends, then holds every change', async () => {
    const view = new ListedView({ epoch: 3 });
    view.update(keyOf('a'), pool('a'));
    const before = view.body();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const applied = view.batchAsync(async () => {
      view.update(keyOf('b'), pool('b'));
      await held;
      view.update(keyOf('c'), pool('c'));
    });
    await nextTurn();
    expect(view.body()).toBe(before);
    expect(view.etag(undefined, 'identity')).toBe(view.etag(undefined, 'identity'));
    release();
    await applied;
    const after = JSON.parse(new TextDecoder().decode(view.body())) as { revision: string; pools: Array<{ name: string }> };
    expect(after.revision).toBe('3-2');
    expect(after.pools.map((p) => p.name)).toEqual(['a', 'b', 'c']);
  });
});

describe('ListedView.group', () => {
  it('publishes each change once it returns, all under one new revision, in a list sorted once', () => {
    const view = new ListedView({ epoch: 4 });
    view.update(keyOf('m'), pool('m'));
    // The order is built (a GET /pools), so a group must keep it right without splicing per pool.
    expect(view.list().pools.map((p) => p.name)).toEqual(['m']);
    const events: WatchEvent[] = [];
    view.subscribe((event) => events.push(event));
    view.group(() => {
      view.update(keyOf('z'), pool('z'));
      view.update(keyOf('a'), pool('a'));
      view.update(keyOf('m'), null);
      expect(events).toEqual([]);
    });
    expect(events.map((e) => [e.kind, e.data.revision])).toEqual([
      ['upsert', '4-2'],
      ['upsert', '4-2'],
      ['delete', '4-2'],
    ]);
    expect(view.revision).toBe('4-2');
    expect(view.list().pools.map((p) => p.name)).toEqual(['a', 'z']);
    expect(JSON.parse(Buffer.from(view.body()).toString()).pools.map((p: { name: string }) => p.name)).toEqual(['a', 'z']);

    // A group that changed nothing publishes nothing and keeps the revision.
    view.group(() => view.update(keyOf('a'), pool('a')));
    expect(events).toHaveLength(3);
    expect(view.revision).toBe('4-2');
  });

  it('inside a batch is part of it: nothing published on its own, the resync carries it', async () => {
    const view = new ListedView({ epoch: 5 });
    const events: WatchEvent[] = [];
    view.subscribe((event) => events.push(event));
    await view.batchAsync(async () => {
      view.group(() => view.update(keyOf('a'), pool('a')));
      expect(events).toEqual([]);
      await nextTurn();
    });
    expect(events).toEqual([{ kind: 'resync', data: expect.objectContaining({ revision: '5-1', pools: [pool('a')] }) }]);
  });
});
