// What the real binary prints while clients misbehave in ordinary ways: 20 watchers print no
// MaxListenersExceededWarning, and a POST whose body is cut short is a counted outcome with a quiet log
// line, not an error with a stack trace (docs/operations.md "Failure modes").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { metricSample, rawConnect } from './raw-client.js';

describe('the binary stays quiet', () => {
  let replica: PoolscopeProcess;
  beforeAll(async () => {
    replica = await startPoolscope(['--lease-duration-secs=600', '--heartbeat-interval-secs=5'], { env: { POOLSCOPE_LOG_LEVEL: 'debug' } });
  });
  afterAll(() => replica?.stop());

  it('prints no MaxListenersExceededWarning with 20 watchers (and /debug watchers)', async () => {
    const watchers = await Promise.all([
      ...Array.from({ length: 20 }, () => SseReader.open(replica.url, '/pools/watch')),
      ...Array.from({ length: 20 }, () => SseReader.open(replica.url, '/debug/pools/watch')),
    ]);
    await waitFor(() => watchers.every((w) => w.messages.length >= 1), { message: 'every first event' });
    await Promise.all(watchers.map((w) => w.close()));
    await waitFor(async () => (await metricSample(replica.url, 'poolscope_watch_subscribers', { stream: 'pools' })) === 0, { message: 'watchers gone' });
    expect(replica.stderr()).not.toMatch(/MaxListenersExceededWarning/);
    expect(replica.stderr()).toBe('');
  });

  it('counts a POST body cut short as aborted, logs no error and no stack', async () => {
    const before = (await metricSample(replica.url, 'poolscope_heartbeats_total', { outcome: 'aborted' })) ?? 0;
    for (let i = 0; i < 5; i++) {
      const cut = await rawConnect(
        replica.port,
        'POST /pools HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"cluster_id":',
      );
      await waitFor(() => replica.logs.length > 0);
      cut.socket.destroy();
    }
    await waitFor(async () => (await metricSample(replica.url, 'poolscope_heartbeats_total', { outcome: 'aborted' })) === before + 5, {
      message: 'five aborted heartbeats counted',
    });
    const loud = replica.logs.filter((line) => typeof line.level === 'number' && line.level >= 50);
    expect(loud).toEqual([]);
    expect(JSON.stringify(replica.logs)).not.toMatch(/"stack"/);
    const quiet = replica.logs.filter((line) => line.msg === 'request body aborted by the client');
    expect(quiet).toHaveLength(5);
    expect(quiet.every((line) => line.level === 20)).toBe(true);
    expect(replica.stderr()).toBe('');
  });
});
