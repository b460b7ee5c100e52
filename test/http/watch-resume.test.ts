// Resuming GET /pools/watch (docs/contract.md §5): a Last-Event-ID this replica issued, within the last
// changes, starts the stream with the changes after it and no resync; any other (unknown, of another
// epoch, too old, before a resync, garbage) starts it with a resync. The window itself (watch-replay.ts).
import { describe, expect, it } from 'vitest';
import type { ListedPool } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';
import { WatchHub } from '../../src/http/watch-hub.js';
import { ReplayLog, REPLAY_WINDOW } from '../../src/http/watch-replay.js';
import { unchunk } from '../../src/http/sse.js';
import type { WatchSink } from '../../src/http/watch-sink.js';
import { request } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService } from '../support/service.js';
import { postJson } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { pool as listedPool } from '../support/listed-pool.js';

/** Every stream's first bytes (docs/contract.md §11). */
const RETRY = 'retry: 1000\n\n';

/** A sink that holds the frames after the stream's `retry:`, which it checks came first. */
class FakeSink implements WatchSink {
  readonly chunks: string[] = [];
  private retried = false;
  backlogBytes = 0;
  readonly peer = 'fake';
  private readonly closers: (() => void)[] = [];
  write(frame: Uint8Array): void {
    // The hub hands over HTTP/1.1 chunks; their SSE bytes are what a client reads.
    const text = new TextDecoder().decode(unchunk(frame));
    if (!this.retried) {
      expect(text, 'the first bytes of a stream').toBe(RETRY);
      this.retried = true;
      return;
    }
    this.chunks.push(text);
  }
  onClose(listener: () => void): void {
    this.closers.push(listener);
  }
  end(): void {
    this.closers.forEach((f) => f());
  }
  destroy(): void {
    this.closers.forEach((f) => f());
  }
  /** Every event as `kind:id:name`, and comments as `:text`, in order. */
  events(): string[] {
    return this.chunks
      .join('')
      .split('\n\n')
      .filter((block) => block !== '')
      .map((block) =>
        block.startsWith(':') ? block : `${/^event: (\w+)/.exec(block)?.[1]}:${/\nid: (\S+)/.exec(block)?.[1]}:${/"name":"([^"]+)"/.exec(block)?.[1] ?? ''}`,
      );
  }
}

/** A frontendless pool `c/ns/<name>`. */
const pool = (name: string): ListedPool => listedPool(name, { cluster_id: 'c', namespace: 'ns', model: 'm', frontends: [], state: 'frontendless' });

function hubOn(view: ListedView, options: { replayWindow?: number; maxBacklogBytes?: number } = {}) {
  return new WatchHub({ view, maxWatchers: 100, maxBacklogBytes: options.maxBacklogBytes ?? 1 << 20, keepAliveMs: 60_000, replayWindow: options.replayWindow });
}

function join(hub: WatchHub, lastEventId?: string) {
  const sink = new FakeSink();
  const resumed = hub.add(sink, lastEventId);
  return { sink, resumed };
}

describe('WatchHub: resuming', () => {
  it('resumes after a revision in the window with only the later changes, no resync', async () => {
    const view = new ListedView({ epoch: 77 });
    const hub = hubOn(view);
    const first = join(hub);
    view.update('c/ns/a', pool('a'));
    view.update('c/ns/b', pool('b'));
    view.update('c/ns/a', null);
    expect(first.sink.events()).toEqual(['resync:77-0:', 'upsert:77-1:a', 'upsert:77-2:b', 'delete:77-3:a']);

    const after1 = join(hub, '77-1');
    expect(after1.resumed).toBe(true);
    expect(after1.sink.events()).toEqual([': resumed', 'upsert:77-2:b', 'delete:77-3:a']);
    // The very bytes every stream got.
    expect(after1.sink.chunks.join('')).toBe(`: resumed\n\n${first.sink.chunks.slice(2).join('')}`);

    const current = join(hub, '77-3');
    expect(current.resumed).toBe(true);
    expect(current.sink.events()).toEqual([': resumed']);
    const fromZero = join(hub, '77-0');
    expect(fromZero.sink.events()).toEqual([': resumed', 'upsert:77-1:a', 'upsert:77-2:b', 'delete:77-3:a']);

    // Then live, like every stream.
    view.update('c/ns/c', pool('c'));
    await waitFor(() => after1.sink.events().length === 4);
    expect(after1.sink.events().at(-1)).toBe('upsert:77-4:c');
    expect(current.sink.events()).toEqual([': resumed', 'upsert:77-4:c']);
    hub.close();
  });

  it('starts with a resync for any other Last-Event-ID', () => {
    const view = new ListedView({ epoch: 77 });
    const hub = hubOn(view);
    view.update('c/ns/a', pool('a'));
    view.update('c/ns/b', pool('b'));
    for (const id of ['', 'garbage', '77-3', '78-1', '7-1', '77-01', '177-1', '77-1 ', '77-99999999999999999999']) {
      const { sink, resumed } = join(hub, id);
      expect(resumed, id).toBe(false);
      expect(sink.events(), id).toEqual(['resync:77-2:a']); // (the first pool's name)
    }
    hub.close();
  });

  it('follows the view with no stream open, so a lone watcher that left can resume', () => {
    const view = new ListedView({ epoch: 5 });
    const hub = hubOn(view);
    const { sink } = join(hub);
    sink.end();
    expect(hub.size).toBe(0);
    view.update('c/ns/a', pool('a'));
    view.update('c/ns/b', pool('b'));
    const back = join(hub, '5-0');
    expect(back.sink.events()).toEqual([': resumed', 'upsert:5-1:a', 'upsert:5-2:b']);
    hub.close();
  });

  it('starts with a resync when a resync was published after the revision (it may drop pools)', () => {
    const view = new ListedView({ epoch: 5 });
    const hub = hubOn(view);
    view.update('c/ns/a', pool('a'));
    view.batch(() => view.update('c/ns/a', null)); // a relist that dropped `a`: no delete, a resync
    view.update('c/ns/b', pool('b'));
    expect(view.revision).toBe('5-3');
    expect(join(hub, '5-1').sink.events()).toEqual(['resync:5-3:b']);
    // After the resync's revision: the changes since.
    expect(join(hub, '5-2').sink.events()).toEqual([': resumed', 'upsert:5-3:b']);
    // A completeness change is a resync too.
    view.setCompleteness({ complete: true, reasons: [] });
    expect(join(hub, '5-3').sink.events()).toEqual(['resync:5-4:b']);
    expect(join(hub, '5-4').resumed).toBe(true);
    hub.close();
  });

  it('keeps at least the window of changes; older revisions get a resync', () => {
    const view = new ListedView({ epoch: 5 });
    const hub = hubOn(view, { replayWindow: 8 });
    for (let i = 1; i <= 20; i++) view.update('c/ns/a', { ...pool('a'), capacity: [{ name: 'n', value: i }] });
    expect(view.revision).toBe('5-20');
    const oldest = [...Array(21).keys()].find((seq) => join(hub, `5-${seq}`).resumed)!;
    expect(oldest).toBeGreaterThan(0);
    expect(oldest).toBeLessThanOrEqual(20 - 8);
    const resumed = join(hub, `5-${20 - 8}`);
    expect(resumed.resumed).toBe(true);
    expect(resumed.sink.events()).toHaveLength(1 + 8);
    hub.close();
  });

  it('starts with a resync when the changes to replay are more than a stream may hold unsent', () => {
    const view = new ListedView({ epoch: 5 });
    const hub = hubOn(view, { maxBacklogBytes: 1_000 });
    for (let i = 0; i < 10; i++) view.update(`c/ns/p${i}`, pool(`p${i}`));
    expect(join(hub, '5-9').resumed).toBe(true);
    expect(join(hub, '5-0').resumed).toBe(false);
    expect(join(hub, '5-0').sink.events()[0]).toMatch(/^resync:5-10:/);
    hub.close();
  });
});

describe('ReplayLog', () => {
  it('holds the frames after a sequence, trims to at least its capacity, and restarts on a gap or reset', () => {
    const frame = (n: number) => new Uint8Array([n]);
    const log = new ReplayLog(16, 10);
    expect(log.since(10)).toEqual([]);
    expect(log.since(9)).toBeUndefined();
    expect(log.since(11)).toBeUndefined();
    for (let seq = 11; seq <= 40; seq++) log.push(seq, frame(seq));
    expect(log.size).toBeGreaterThanOrEqual(16);
    expect(log.size).toBeLessThanOrEqual(18);
    expect(log.since(40)).toEqual([]);
    expect(log.since(24)!.map((f) => f[0])).toEqual([...Array(16).keys()].map((i) => 25 + i));
    expect(log.since(40 - log.size - 1)).toBeUndefined();
    expect(log.since(24.5)).toBeUndefined();
    log.push(42, frame(42)); // 41 was never seen
    expect(log.since(40)).toBeUndefined();
    expect(log.since(41)).toBeUndefined();
    expect(log.since(42)).toEqual([]);
    log.push(43, frame(43));
    expect(log.since(42)!.map((f) => f[0])).toEqual([43]);
    log.reset(43);
    expect(log.size).toBe(0);
    expect(log.since(42)).toBeUndefined();
    expect(log.since(43)).toEqual([]);
    expect(REPLAY_WINDOW).toBe(10_000);
  });
});

describe('GET /pools/watch with Last-Event-ID', () => {
  it('resumes through the route, and resyncs for an id of another replica', async () => {
    const svc = await startService({ leaseMs: 60_000, socket: false });
    const open = async (lastEventId: string) => {
      const abort = new AbortController();
      const response = await request(svc.app, '/pools/watch', { signal: abort.signal, headers: { 'last-event-id': lastEventId } });
      const reader = response.body!.getReader();
      let text = '';
      while (!/event: \w+\n/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
      abort.abort();
      await reader.cancel().catch(() => {});
      return text;
    };
    try {
      const revision = svc.join.view.revision;
      expect((await postJson(svc.app, registration())).status).toBe(200);
      await waitFor(() => svc.join.view.revision !== revision, { message: 'the upsert' });
      const resumed = await open(revision);
      expect(resumed).toMatch(/^retry: 1000\n\n: resumed\n\nevent: upsert\nid: \S+\ndata: .*"name":"llama-70b"/);
      expect(resumed).not.toContain('resync');
      const other = await open(`1${revision}`);
      expect(other).toMatch(/^retry: 1000\n\nevent: resync\n/);
    } finally {
      await svc.stop();
    }
  });
});
