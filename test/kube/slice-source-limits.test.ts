// The loop's limits (docs/design.md "Watch loops"), against the fake API server through the real client: a
// list that does not answer, a watch that goes silent, a watch answered with 410 every time, and a loop
// that fails on something it cannot handle. Short timeouts through the same options the defaults use.
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_WATCH_LINE_BYTES } from '../../src/kube/slice-api.js';
import { expectBackoff } from '../support/backoff.js';
import { waitFor } from '../support/wait.js';
import { fixtureObject, startFake, startSource } from './source-harness.js';

const LLAMA = 'gpu-east-1/dynamo/llama-70b';
const MISTRAL = 'gpu-east-1/dynamo/mistral-7b';
const RELAY_URL = 'http://10.12.3.41:9000';

/** The product's backoff (0.8 s doubling to 30 s, jitter), its waits recorded and cut to 1 ms. */
function recordedProductBackoff(delays: number[]) {
  return {
    sleep: async (ms: number, signal: AbortSignal) => {
      delays.push(ms);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    },
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('EndpointSlice source limits', () => {
  it('a list the server never answers, or stops sending, is abandoned after the list timeout and retried', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    fake.failNextLists('hang', 'stall');
    const { listener, delays, logs } = startSource(fake, { listTimeoutMs: 500 });
    await waitFor(() => listener.synced, { message: 'the sync after two abandoned lists' });
    // (A loaded machine may abandon a healthy list too: only the first two are pinned down.)
    expect(fake.listRequests().length).toBeGreaterThanOrEqual(3);
    expect(delays.slice(0, 2)).toEqual([100, 200]);
    const failed = logs.filter((l) => l.level === 40 && String(l.msg).startsWith('listing EndpointSlices failed'));
    expect(failed.slice(0, 2).map((l) => l.msg)).toEqual([
      'listing EndpointSlices failed: no answer within 500 ms',
      'listing EndpointSlices failed: no answer within 500 ms',
    ]);
    expect(listener.view.get(LLAMA)?.relays).toEqual([RELAY_URL]);
  });

  it('a watch that delivers nothing, not even a bookmark, for the idle timeout is restarted from where it was', async () => {
    const keepAlive = vi.spyOn(net.Socket.prototype, 'setKeepAlive');
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    // The first watch is accepted, then not a byte arrives on it: a half-open path.
    fake.failNextWatches('silent');
    const { listener, source, delays, logs } = startSource(fake, { watchIdleTimeoutMs: 300 });
    await waitFor(() => listener.synced, { message: 'the first sync' });
    fake.add(fixtureObject('mcs/frontend-ipv4.json'));
    await waitFor(() => listener.view.get(LLAMA)?.frontends.length === 1, { message: 'the event, through the next watch' });

    // The silent watch is given up and the next one resumes where it started. (The next one may go idle
    // in its turn on a loaded machine once it has delivered: only the first restart is pinned down.)
    expect(fake.watchRequests()[1]?.query).toMatchObject({ resourceVersion: '1001', allowWatchBookmarks: 'true' });
    expect(source.stats.lists).toBe(1);
    expect(delays[0]).toBe(100);
    const reason = 'watch silent for 300 ms (no event or bookmark)';
    expect(listener.statuses().map((s) => s.reason)).toContain(`${reason}; retrying in 100 ms`);
    const warnings = logs.filter((l) => l.level === 40);
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.every((l) => l.msg === reason)).toBe(true);
    // TCP keep-alive on the watch's socket, so the kernel notices a dead peer too.
    expect(keepAlive).toHaveBeenCalledWith(true, 30_000);
  });

  it('a watch line that never ends is cut at 16 MiB: the watch ends with a warning and a relist, nothing more of it is read', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    fake.failNextWatches('endless-line');
    // An idle timeout far beyond what 16 MiB takes over loopback: only the line's length may end this watch.
    const { listener, source, logs } = startSource(fake, { watchIdleTimeoutMs: 20_000 });
    await waitFor(() => source.stats.lists === 2 && listener.synced, { timeoutMs: 15_000, message: 'the relist after the endless line' });
    fake.add(fixtureObject('mcs/frontend-ipv4.json'));
    await waitFor(() => listener.view.get(LLAMA)?.frontends.length === 1, { message: 'the event, through the watch after the relist' });

    expect(source.stats.oversizedLines).toBe(1);
    const warning = logs.find((l) => l.msg === 'EndpointSlice watch line longer than the limit; relisting');
    expect(warning).toMatchObject({ level: 40, limit_bytes: MAX_WATCH_LINE_BYTES, resource_version: '1001' });
    expect(listener.statuses().map((s) => s.reason)).toContain(`watch line longer than ${MAX_WATCH_LINE_BYTES} bytes; relisting; retrying in 100 ms`);
    // The server stopped at what the client took before it closed the connection: the limit, and at most
    // what the two sockets' buffers hold beyond it, far below the 64 MiB it would have sent.
    expect(fake.endlessLineBytes[0]).toBeGreaterThan(MAX_WATCH_LINE_BYTES);
    expect(fake.endlessLineBytes[0]).toBeLessThan(MAX_WATCH_LINE_BYTES + 8 * 1024 * 1024);
  });

  it('bytes of a line that never ends do not keep a watch alive: only complete lines re-arm the idle timer', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    fake.failNextWatches('trickle');
    const { listener, source, logs } = startSource(fake, { watchIdleTimeoutMs: 300 });
    await waitFor(() => listener.synced, { message: 'the first sync' });
    await waitFor(() => fake.watchRequests().length >= 2, { message: 'the watch after the trickling one' });
    expect(logs.filter((l) => l.level === 40).map((l) => l.msg)).toContain('watch silent for 300 ms (no event or bookmark)');
    // Resumed where it was: the trickle carried nothing.
    expect(fake.watchRequests()[1]?.query).toMatchObject({ resourceVersion: '1001' });
    expect(source.stats.lists).toBe(1);
  });

  it('a watch answered with 410 every time relists after a growing backoff (0.8 s doubling to 30 s), not once a second', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    const delays: number[] = [];
    fake.failNextWatches('line-410', 'http-410', 'line-410', 'http-410', 'line-410', 'line-410', 'line-410', 'line-410');
    const { listener, source } = startSource(fake, { backoff: recordedProductBackoff(delays) });
    await waitFor(() => source.stats.expired === 8 && listener.synced, { message: 'the relists' });
    // Every 410 costs a full LIST, and each list succeeded: that must not start the backoff over.
    expect(fake.listRequests()).toHaveLength(9);
    expectBackoff(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    expect(listener.statuses().filter((s) => s.reason?.includes('expired (410); relisting; retrying in'))).toHaveLength(8);
  });

  it('a loop that fails unexpectedly is restarted after a backoff, counted, and reported down until it is synced again', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    // A frontend slice without the port named "http" makes the source warn, and the warning hook throws:
    // the list itself succeeds, the loop fails while handling it.
    fake.add(fixtureObject('mcs/frontend-other-port-name.json'));
    let hookFails = true;
    const onWarning = () => {
      if (hookFails) throw new Error('warning hook failed');
    };
    const { listener, source, delays, logs } = startSource(fake, { onWarning });
    await waitFor(() => source.stats.loopRestarts >= 3, { message: 'three restarts' });
    expect(listener.synced).toBe(false);
    expect(listener.down).toMatch(/^EndpointSlice loop failed unexpectedly \(warning hook failed\); restarting in \d+ ms$/);
    expect(delays.slice(0, 3)).toEqual([100, 200, 400]);
    const failures = logs.filter((l) => l.msg === 'EndpointSlice loop failed unexpectedly; restarting it');
    expect(failures.length).toBeGreaterThanOrEqual(3);
    expect(failures[0]).toMatchObject({ level: 50, retry_in_ms: 100, err: { message: 'warning hook failed' } });

    hookFails = false;
    await waitFor(() => listener.synced && listener.down === undefined, { message: 'the restarted loop synced' });
    expect(listener.view.get(LLAMA)?.relays).toEqual([RELAY_URL]);
    expect(listener.view.get(MISTRAL)?.frontendSlicesWithPort).toBe(false);
    expect(fake.listRequests()).toHaveLength(source.stats.loopRestarts + 1);
  });

  it('an event the loop fails on ends the loop, not the process; the loop restarts and relists', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    let hookFails = false;
    const onWarning = () => {
      if (hookFails) throw new Error('warning hook failed');
    };
    const { listener, source } = startSource(fake, { onWarning });
    await waitFor(() => listener.synced, { message: 'the first sync' });

    hookFails = true;
    fake.add(fixtureObject('mcs/frontend-other-port-name.json'));
    await waitFor(() => listener.down !== undefined, { message: 'the loop down' });
    expect(source.stats.loopRestarts).toBeGreaterThanOrEqual(1);
    expect(listener.synced).toBe(false);

    hookFails = false;
    await waitFor(() => listener.synced && listener.down === undefined, { message: 'the restarted loop synced' });
    expect(fake.listRequests().length).toBeGreaterThanOrEqual(2);
    expect(listener.view.get(MISTRAL)?.frontendSlicesWithPort).toBe(false);
    expect(listener.calls.filter((c) => c.kind === 'down').at(-1)).toEqual({ kind: 'down', reason: undefined });
  });
});
