// The watch hub's life (src/http/watch-hub.ts), on sinks read through web streams: keep-alives only
// while a stream is open, one timer however many streams; the count of open streams after each change;
// every stream's unsent bytes summed; a stalled stream cut under its stream's label; and close(): every
// stream ended with `closing`, a later one ended at once.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WatchHub, type WatchHubOptions } from '../../src/http/watch-hub.js';
import { streamSink } from '../../src/http/watch-sink.js';
import { ListedView } from '../../src/join/listed-view.js';
import { pool as listedPool } from '../support/listed-pool.js';
import { waitFor } from '../support/wait.js';

afterEach(() => {
  vi.useRealTimers();
});

const pool = (name: string) => listedPool(name, { cluster_id: 'c', namespace: 'ns', model: 'm', frontends: [], state: 'frontendless' });
const decoder = new TextDecoder();

function hubOf(options: Partial<WatchHubOptions> = {}) {
  const view = new ListedView({ epoch: 1 });
  const hub = new WatchHub({ view, maxWatchers: 100, maxBacklogBytes: 1 << 20, keepAliveMs: 1000, ...options });
  return { view, hub };
}

/** A stream on the hub and everything it received so far. */
function open(hub: WatchHub) {
  const { sink, response } = streamSink();
  const reader = response.body!.getReader();
  let received = '';
  let ended = false;
  const pumped = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      received += decoder.decode(value);
    }
    ended = true;
  })();
  const resumed = hub.add(sink);
  return {
    sink,
    resumed,
    reader,
    pumped,
    get received() {
      return received;
    },
    get ended() {
      return ended;
    },
  };
}

describe('WatchHub: its life', () => {
  it('keeps streams alive with one timer while any is open, none when the last leaves, again for a new one', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { hub } = hubOf();
    expect(vi.getTimerCount()).toBe(0);
    const a = open(hub);
    const b = open(hub);
    expect(vi.getTimerCount()).toBe(1);
    await waitFor(() => a.received.includes('event: resync') && b.received.includes('event: resync'), { message: 'the resyncs' });
    vi.advanceTimersByTime(1000);
    await waitFor(() => a.received.endsWith(': keep-alive\n\n') && b.received.endsWith(': keep-alive\n\n'), { message: 'keep-alives' });
    await a.reader.cancel();
    expect(vi.getTimerCount()).toBe(1);
    await b.reader.cancel();
    expect(vi.getTimerCount()).toBe(0);
    open(hub);
    expect(vi.getTimerCount()).toBe(1);
  });

  it('keeps the keep-alive timer when a stalled stream is cut beside a reading one; stops it when the last is cut', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const counts: number[] = [];
    const { view, hub } = hubOf({ maxBacklogBytes: 600, onSubscribers: (count) => counts.push(count) });
    const reading = open(hub);
    const { sink: stalled, response } = streamSink();
    hub.add(stalled);
    for (let i = 0; i < 20 && hub.size === 2; i += 1) {
      view.update(`c/ns/p${i}`, pool(`p${i}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await expect(response.text()).rejects.toThrow('watch stream dropped');
    // Counted once: cut by the hub, then closed.
    expect(counts).toEqual([1, 2, 1]);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1000);
    await waitFor(() => reading.received.endsWith(': keep-alive\n\n'), { message: 'a keep-alive to the reading stream' });

    const { view: lone, hub: loneHub } = hubOf({ maxBacklogBytes: 600 });
    const { sink: only } = streamSink();
    loneHub.add(only);
    expect(vi.getTimerCount()).toBe(2);
    for (let i = 0; i < 20 && loneHub.size === 1; i += 1) {
      lone.update(`c/ns/p${i}`, pool(`p${i}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(loneHub.size).toBe(0);
    expect(vi.getTimerCount()).toBe(1);
    hub.close();
  });

  it('reports the open streams after each change, once per stream that leaves; sums their unsent bytes', async () => {
    const counts: number[] = [];
    const { view, hub } = hubOf({ onSubscribers: (count) => counts.push(count) });
    const { sink: a } = streamSink();
    const { sink: b } = streamSink();
    hub.add(a);
    hub.add(b);
    expect(hub.size).toBe(2);
    await waitFor(() => a.backlogBytes > 0 && b.backlogBytes > 0, { message: 'both resyncs queued' });
    view.update('c/ns/one', pool('one'));
    await waitFor(() => hub.backlogBytes === a.backlogBytes + b.backlogBytes && a.backlogBytes > 200, { message: 'the upsert queued' });
    expect(hub.backlogBytes).toBe(a.backlogBytes + b.backlogBytes);
    a.end();
    a.end();
    expect(counts).toEqual([1, 2, 1]);
    expect(hub.backlogBytes).toBe(b.backlogBytes);
  });

  it('cuts a stalled stream under its label: `pools` unless named', async () => {
    for (const stream of [undefined, 'debug'] as const) {
      const dropped: unknown[] = [];
      const { view, hub } = hubOf({ maxBacklogBytes: 600, onDropped: (...args) => dropped.push(args), ...(stream ? { stream } : {}) });
      const { sink, response } = streamSink();
      hub.add(sink);
      for (let i = 0; i < 20 && dropped.length === 0; i += 1) {
        view.update(`c/ns/p${i}`, pool(`p${i}`));
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(dropped).toEqual([['backlog', stream ?? 'pools']]);
      expect(hub.size).toBe(0);
      await expect(response.text()).rejects.toThrow('watch stream dropped');
    }
  });

  it('close(): every stream gets `closing` and its end; a later one is ended at once, given nothing', async () => {
    const { hub } = hubOf();
    const a = open(hub);
    await waitFor(() => a.received.includes('event: resync'), { message: 'the resync' });
    hub.close();
    await a.pumped;
    expect(a.received.endsWith('event: closing\ndata: {"reason":"the replica is shutting down"}\n\n')).toBe(true);
    expect(hub.size).toBe(0);

    const late = open(hub);
    expect(late.resumed).toBe(false);
    await late.pumped;
    expect(late.received).toBe('');
    expect(hub.size).toBe(0);
  });
});
