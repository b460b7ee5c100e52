// A watcher that reads nothing (docs/contract.md §8): once its unsent backlog passes
// --watch-max-backlog-bytes (default 4 MiB) it is disconnected and counted in
// poolscope_watch_dropped_total{reason="backlog"}; a watcher that reads gets every event meanwhile, and
// what the streams hold unsent (poolscope_watch_backlog_bytes) stays within the limit throughout (the real
// binary, its own process). The replica's RSS is not asserted: with 33 KB registrations it grows by the
// memory store's replay window and the /debug history whether or not a watcher stalls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../support/http.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { metricSample, rawConnect, WATCH_REQUEST } from './raw-client.js';

const MIB = 1024 * 1024;
/** Changes pushed through the watchers: four times the default limit. */
const PUSHED_BYTES = 16 * MIB;

/** A registration of about 33 KB (64 capabilities of 512 characters), different for every `i`. */
function bigRegistration(i: number) {
  const capabilities = Array.from({ length: 64 }, (_, c) => `${String(i).padStart(6, '0')}-${c}-`.padEnd(512, 'x'));
  return registration({ name: `big-${i % 50}`, capabilities });
}

describe('a watcher that reads nothing', () => {
  let replica: PoolscopeProcess;
  beforeAll(async () => {
    replica = await startPoolscope(['--lease-duration-secs=600', '--heartbeat-interval-secs=5'], { env: { POOLSCOPE_LOG_LEVEL: 'info' } });
  });
  afterAll(() => replica?.stop());

  it('is disconnected past the backlog limit while a reading watcher gets every event, memory bounded', async () => {
    const reader = await SseReader.open(replica.url, '/pools/watch');
    const stalled = await rawConnect(replica.port, WATCH_REQUEST);
    await waitFor(() => stalled.count('event: resync') === 1 && reader.messages.length === 1, { message: 'both resyncs' });
    stalled.socket.pause();
    expect(await metricSample(replica.url, 'poolscope_watch_subscribers', { stream: 'pools' })).toBe(2);

    const body = JSON.stringify(bigRegistration(0));
    const changes = Math.ceil(PUSHED_BYTES / body.length);
    let backlogPeak = 0;
    for (let i = 0; i < changes; i++) {
      expect((await postJson(replica.url, bigRegistration(i))).status).toBe(200);
      if (i % 10 === 0) backlogPeak = Math.max(backlogPeak, (await metricSample(replica.url, 'poolscope_watch_backlog_bytes', { stream: 'pools' }))!);
    }
    await waitFor(() => reader.of('upsert').length === changes, { timeoutMs: 60_000, message: `${changes} upserts on the reading watcher` });

    expect(await metricSample(replica.url, 'poolscope_watch_dropped_total', { reason: 'backlog', stream: 'pools' })).toBe(1);
    expect(await metricSample(replica.url, 'poolscope_watch_subscribers', { stream: 'pools' })).toBe(1);
    // The reading watcher saw every change in order, its stream still open.
    const names = reader.of('upsert').map((m) => (m.data as { pool: { capabilities: string[] } }).pool.capabilities[0]!.slice(0, 6));
    expect(names).toEqual(Array.from({ length: changes }, (_, i) => String(i).padStart(6, '0')));
    expect(reader.ended).toBe(false);
    // Bounded: never much more than the limit unsent at once, and nothing once the stalled stream is gone.
    expect(backlogPeak).toBeGreaterThan(MIB);
    expect(backlogPeak).toBeLessThan(5 * MIB);
    await waitFor(async () => (await metricSample(replica.url, 'poolscope_watch_backlog_bytes', { stream: 'pools' }))! < 256 * 1024, { message: 'backlog let go' });
    // The stalled stream ended: reading it now gets what was in flight, then the close.
    stalled.socket.resume();
    await stalled.whenClosed;
    expect(stalled.bytes).toBeLessThan(PUSHED_BYTES / 2);
    const dropped = replica.logs.find((line) => line.msg === 'watch stream dropped: its unsent backlog passed the limit');
    expect(dropped).toMatchObject({ level: 30, limit_bytes: 4 * MIB });
    await reader.close();
  }, 120_000);
});
