// The limits every event stream obeys (src/http/stream-gate.ts, docs/contract.md §8), on sinks read
// through web streams: a backlog at the limit (plus the allowance) kept and one byte more cut, logged and
// counted with its stream; the open streams counted until they close, the next past --max-watchers
// refused; nothing written to a stream the gate does not hold.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { chunkOf } from '../../src/http/sse.js';
import { cutIfBehind, DEFAULT_WATCH_LIMITS, StreamGate, WATCH_RETRY_AFTER_SECS, type StreamGateOptions } from '../../src/http/stream-gate.js';
import { streamSink } from '../../src/http/watch-sink.js';
import { captureLogs } from '../support/logs.js';

const frameOf = (size: number) => chunkOf([new Uint8Array(size).fill(120)]);

describe('the limits', () => {
  it('default to 10,000 streams and 4 MiB of backlog a stream; a refused watcher waits 5 s', () => {
    expect(DEFAULT_WATCH_LIMITS).toEqual({ maxWatchers: 10_000, maxBacklogBytes: 4_194_304 });
    expect(WATCH_RETRY_AFTER_SECS).toBe(5);
  });
});

describe('cutIfBehind', () => {
  function gateOptions(): { options: StreamGateOptions; dropped: unknown[]; warnings: () => unknown[] } {
    const dropped: unknown[] = [];
    const logs = captureLogs('info');
    return {
      options: { stream: 'debug', maxWatchers: 10, maxBacklogBytes: 100, onDropped: (...args) => dropped.push(args), logger: logs.logger },
      dropped,
      warnings: () => logs.lines.filter((line) => line.msg === 'watch stream dropped: its unsent backlog passed the limit'),
    };
  }

  it('keeps a stream at the limit plus its allowance; cuts, logs and counts one a byte past it', async () => {
    const { options, dropped, warnings } = gateOptions();
    const kept = streamSink();
    kept.sink.write(frameOf(150));
    expect(cutIfBehind(kept.sink, 50, options)).toBe(false);
    expect(dropped).toEqual([]);

    const cut = streamSink();
    cut.sink.write(frameOf(151));
    expect(cutIfBehind(cut.sink, 50, options)).toBe(true);
    expect(dropped).toEqual([['backlog', 'debug']]);
    expect(warnings()).toEqual([expect.objectContaining({ stream: 'debug', backlog_bytes: 151, limit_bytes: 100 })]);
    await expect(cut.response.text()).rejects.toThrow('watch stream dropped');
  });

  it('cuts without hooks or a logger', async () => {
    const cut = streamSink();
    cut.sink.write(frameOf(101));
    expect(cutIfBehind(cut.sink, 0, { stream: 'pools', maxWatchers: 1, maxBacklogBytes: 100 })).toBe(true);
    await expect(cut.response.text()).rejects.toThrow('watch stream dropped');
  });
});

describe('StreamGate', () => {
  it('counts its open streams and their backlog until each closes, and is full at --max-watchers', () => {
    const gate = new StreamGate({ stream: 'pools', maxWatchers: 2, maxBacklogBytes: 1000 });
    const a = streamSink();
    const b = streamSink();
    gate.admit(a.sink);
    expect([gate.size, gate.full]).toEqual([1, false]);
    gate.admit(b.sink);
    expect([gate.size, gate.full]).toEqual([2, true]);
    expect(gate.write(a.sink, frameOf(30))).toBe(true);
    expect(gate.write(b.sink, frameOf(40))).toBe(true);
    expect(gate.backlogBytes).toBe(70);
    b.sink.end();
    expect([gate.size, gate.full, gate.backlogBytes]).toEqual([1, false, 30]);
  });

  it('writes nothing to a stream it does not hold, and drops one it cut', () => {
    const gate = new StreamGate({ stream: 'pools', maxWatchers: 2, maxBacklogBytes: 10 });
    const stranger = streamSink();
    expect(gate.write(stranger.sink, frameOf(5))).toBe(false);
    expect(stranger.sink.backlogBytes).toBe(0);

    const slow = streamSink();
    gate.admit(slow.sink);
    expect(gate.write(slow.sink, frameOf(8), 5)).toBe(true);
    expect(gate.write(slow.sink, frameOf(8), 5)).toBe(false);
    expect(gate.size).toBe(0);
    expect(gate.write(slow.sink, frameOf(1))).toBe(false);
  });

  it('refuses a stream past --max-watchers with 503 too_many_watchers, Retry-After, and counts it', async () => {
    const refused: string[] = [];
    const counted = new StreamGate({ stream: 'debug', maxWatchers: 3, maxBacklogBytes: 10, onRefused: (stream) => refused.push(stream) });
    const uncounted = new StreamGate({ stream: 'pools', maxWatchers: 3, maxBacklogBytes: 10 });
    const app = new Hono().get('/counted', (c) => counted.refuse(c)).get('/uncounted', (c) => uncounted.refuse(c));
    const response = await app.request('/counted');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual({
      error: {
        code: 'too_many_watchers',
        message: 'this replica serves its maximum of 3 watch streams (--max-watchers); retry later or on another replica',
      },
    });
    expect(refused).toEqual(['debug']);
    expect((await app.request('/uncounted')).status).toBe(503);
  });
});
