// Every stream under the limits (docs/contract.md §8), not only GET /pools/watch: a /debug/pools/watch client
// that reads nothing is cut once its unsent backlog passes --watch-max-backlog-bytes, counted with
// `stream="debug"`, while a reading one keeps getting every change; past --max-watchers debug streams the
// next one is refused with 503 too_many_watchers, and the watch streams of GET /pools/watch are counted on
// their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../src/contract/index.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { metricSample, rawConnect, WATCH_REQUEST } from './raw-client.js';

const LIMIT = 64 * 1024;
const DEBUG_WATCH_REQUEST = 'GET /debug/pools/watch HTTP/1.1\r\nHost: poolscope\r\nAccept: text/event-stream\r\n\r\n';
/** Pools changed each round, each with a model of 512 characters: every round's `pools` and `overview` events are hundreds of KiB. */
const POOLS = 400;

describe('/debug/pools/watch under the stream limits', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 600_000, watchMaxBacklogBytes: LIMIT, maxWatchers: 3 });
  });
  afterAll(() => svc?.stop());

  it('cuts a debug stream whose client reads nothing past the backlog limit; a reading one gets every round', async () => {
    const reader = await SseReader.open(svc.url, '/debug/pools/watch');
    const stalled = await rawConnect(svc.port, DEBUG_WATCH_REQUEST);
    await waitFor(() => stalled.received.includes('event: snapshot') && reader.of('snapshot').length === 1, { message: 'both snapshots' });
    stalled.socket.pause();
    await waitFor(async () => (await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'debug' })) === 2, { message: 'two debug streams' });

    // Rounds of changes until the stalled stream is cut (the kernel's socket buffers take some MiB first),
    // then one more.
    const cut = async () => (await metricSample(svc.url, 'poolscope_watch_dropped_total', { reason: 'backlog', stream: 'debug' })) === 1;
    let round = 0;
    let after = 0;
    const deadline = Date.now() + 60_000;
    while (after < 2 && Date.now() < deadline) {
      if (await cut()) after += 1;
      round += 1;
      await Promise.all(
        Array.from({ length: POOLS }, (_, i) => svc.store.heartbeat(registration({ name: `p${i}`, model: `r${round}-`.padEnd(512, 'm') }))),
      );
      const seen = round;
      await waitFor(() => reader.of('pools').some((m) => JSON.stringify(m.data).includes(`"r${seen}-`)), { timeoutMs: 10_000, message: `round ${seen} on the reader` });
    }
    expect(await cut(), `the stalled stream still open after ${round} rounds`).toBe(true);
    expect(await metricSample(svc.url, 'poolscope_watch_dropped_total', { reason: 'backlog', stream: 'pools' })).toBe(0);
    await waitFor(async () => (await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'debug' })) === 1, { message: 'one debug stream left' });
    const dropped = svc.logs.lines.find((line) => line.msg === 'watch stream dropped: its unsent backlog passed the limit');
    expect(dropped).toMatchObject({ level: 30, stream: 'debug', limit_bytes: LIMIT });
    // The reader was never cut, and saw the last round.
    expect(reader.ended).toBe(false);
    // The stalled stream ended: reading it now gets what was in flight, then the close, nothing of the round after the cut.
    stalled.socket.resume();
    await stalled.whenClosed;
    expect(round).toBeGreaterThan(2);
    expect(stalled.received).toContain('"r1-');
    expect(stalled.received).not.toContain(`"r${round}-`);
    await reader.close();
    await waitFor(async () => (await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'debug' })) === 0, { message: 'no debug stream' });
  }, 90_000);

  it('refuses the debug stream past --max-watchers with 503 too_many_watchers; GET /pools/watch streams count apart', async () => {
    const open = await Promise.all(Array.from({ length: 3 }, () => SseReader.open(svc.url, '/debug/pools/watch')));
    const pools = await rawConnect(svc.port, WATCH_REQUEST, { keep: false });
    try {
      await waitFor(async () => (await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'debug' })) === 3, { message: 'three debug streams' });
      const refused = await fetch(`${svc.url}/debug/pools/watch`, { headers: { accept: 'application/json' } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(errorBodySchema.parse(await refused.json()).error.code).toBe('too_many_watchers');
      expect(await metricSample(svc.url, 'poolscope_watch_refused_total', { stream: 'debug' })).toBe(1);
      expect(await metricSample(svc.url, 'poolscope_watch_refused_total', { stream: 'pools' })).toBe(0);
      // The pools stream opened beside three debug streams is served.
      await waitFor(() => pools.received.includes('event: resync'), { message: 'the pools stream' });
      expect(await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'pools' })).toBe(1);
      // One debug stream closes: the next one is served.
      await open.pop()!.close();
      await waitFor(async () => (await metricSample(svc.url, 'poolscope_watch_subscribers', { stream: 'debug' })) === 2, { message: 'two debug streams' });
      const again = await SseReader.open(svc.url, '/debug/pools/watch');
      open.push(again);
      await waitFor(() => again.of('snapshot').length === 1, { message: 'the snapshot' });
    } finally {
      pools.socket.destroy();
      await Promise.all(open.map((reader) => reader.close()));
    }
  });
});
