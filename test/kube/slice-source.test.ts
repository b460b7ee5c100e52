// The list/watch loop against a real HTTP server speaking the Kubernetes list and watch protocol,
// through the real @kubernetes/client-node client.
import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/util/backoff.js';
import { waitFor } from '../support/wait.js';
import { fixtureLines } from './helpers.js';
import { fixtureObject, startFake, startSource } from './source-harness.js';

const LLAMA = 'gpu-east-1/dynamo/llama-70b';
const QWEN = 'gpu-v6-1/dynamo/qwen3-32b';
const GEMMA = 'gpu-east-1/dynamo/gemma-27b';
const RELAY_URL = 'http://10.12.3.41:9000';

async function syncedSource(options: { namespace?: string; rewatchGraceMs?: number } = {}) {
  const fake = await startFake();
  fake.add(fixtureObject('mcs/relay-ready.json'));
  fake.add(fixtureObject('mcs/frontend-ipv6-only.json'));
  const run = startSource(fake, options);
  await waitFor(() => run.listener.synced, { message: 'the first sync' });
  return run;
}

describe('EndpointSlice source', () => {
  it('lists, then watches from the list resourceVersion with bookmarks; events reach the listener', async () => {
    const { fake, listener, source } = await syncedSource();
    const [resync] = listener.calls.filter((c) => c.kind === 'resync');
    expect(resync?.kind === 'resync' && [...resync.pools.keys()].sort()).toEqual([LLAMA, QWEN]);
    expect(listener.view.get(LLAMA)?.relays).toEqual([RELAY_URL]);

    expect(fake.listRequests()).toHaveLength(1);
    const [watch] = fake.watchRequests();
    expect(watch?.path).toBe('/apis/discovery.k8s.io/v1/endpointslices');
    expect(watch?.query).toMatchObject({ watch: 'true', allowWatchBookmarks: 'true', resourceVersion: '1002' });

    fake.add(fixtureObject('mcs/endpoint-not-ready.json'));
    fake.add(fixtureObject('mcs/frontend-ipv4.json'));
    await waitFor(() => listener.view.get(LLAMA)?.frontends.length === 1, { message: 'the llama frontend' });
    expect(listener.view.get(LLAMA)).toEqual({
      relays: [RELAY_URL],
      frontends: ['http://10.12.5.17:8000'],
      frontendSlicesWithPort: true,
    });
    expect(listener.view.get(GEMMA)).toEqual({ relays: [], frontends: [], frontendSlicesWithPort: false });

    const notReady = fixtureObject('mcs/relay-ready.json');
    (notReady.endpoints as Array<{ conditions: object }>)[0]!.conditions = { ready: false };
    fake.modify(notReady);
    await waitFor(() => listener.view.get(LLAMA)?.relays.length === 0, { message: 'the relay going unready' });

    fake.remove('dynamo', 'qwen3-32b-frontend-r9fjs');
    await waitFor(() => !listener.view.has(QWEN), { message: 'qwen leaving' });
    expect(listener.updatesFor(QWEN)).toEqual([null]);
    expect(source.stats).toMatchObject({ lists: 1, watches: 1, failures: 0, synced: true, resourceVersion: '1006' });
  });

  it('watches one namespace; a BOOKMARK moves the resourceVersion and nothing else', async () => {
    const { fake, listener, source } = await syncedSource({ namespace: 'dynamo' });
    expect(fake.listRequests()[0]?.path).toBe('/apis/discovery.k8s.io/v1/namespaces/dynamo/endpointslices');
    // An event in another namespace moves the server's resourceVersion without reaching this watch.
    fake.add({ ...fixtureObject('mcs/relay-ready.json'), metadata: { namespace: 'other', name: 'x-pool-relay-abcde' } });
    const before = listener.calls.length;
    fake.bookmark();
    await waitFor(() => source.stats.resourceVersion === fake.currentResourceVersion, { message: 'the bookmark' });
    expect(listener.calls.length).toBe(before);

    fake.endWatches();
    await waitFor(() => fake.watchRequests().length === 2, { message: 'the next watch' });
    expect(fake.watchRequests()[1]?.query.resourceVersion).toBe(fake.currentResourceVersion);
    expect(fake.watchRequests()[1]?.path).toBe('/apis/discovery.k8s.io/v1/namespaces/dynamo/endpointslices');
  });

  it('a 410 line relists, and the resync drops what vanished without a per-pool update', async () => {
    // A long grace: the re-watch must not claim to be synced before its 410 line arrives.
    const { fake, listener, source } = await syncedSource({ rewatchGraceMs: 2_000 });
    const statusesBefore = listener.statuses().length;
    // The watch drops; meanwhile qwen's slice goes and the watch cache compacts past our resourceVersion.
    fake.dropWatches();
    fake.remove('dynamo', 'qwen3-32b-frontend-r9fjs');
    fake.compact();
    await waitFor(() => source.stats.lists === 2 && listener.synced, { message: 'the relist' });

    const resyncs = listener.calls.filter((c) => c.kind === 'resync');
    expect(resyncs).toHaveLength(2);
    expect(resyncs[1]?.kind === 'resync' && [...resyncs[1].pools.keys()]).toEqual([LLAMA]);
    expect(listener.updatesFor(QWEN)).toEqual([]);
    expect(source.stats.expired).toBe(1);
    expect(fake.watchRequests().at(-1)?.query.resourceVersion).toBe(fake.currentResourceVersion);
    const statuses = listener.statuses().slice(statusesBefore);
    expect(statuses.map((s) => s.synced)).toEqual([false, false, true]);
    // The drop waited 100 ms; the relist waits on a backoff of its own, from its initial delay.
    expect(statuses[1]?.reason).toMatch(/expired \(410\); relisting; retrying in 100 ms$/);
  });

  it('the recorded 410 line (fixtures/watch-expired.jsonl) and an HTTP 410 both relist', async () => {
    const { fake, listener, source } = await syncedSource();
    fake.sendRaw(fixtureLines('watch-expired.jsonl')[0]!);
    await waitFor(() => source.stats.lists === 2 && listener.synced, { message: 'the relist after the 410 line' });
    fake.failNextWatches('http-410');
    fake.dropWatches();
    await waitFor(() => source.stats.lists === 3 && listener.synced, { message: 'the relist after HTTP 410' });
    expect(source.stats.expired).toBe(2);
    expect(listener.count('resync')).toBe(3);
  });

  it('a dropped connection re-watches from the last resourceVersion after a backoff, unsynced meanwhile', async () => {
    const { fake, listener, source, delays } = await syncedSource();
    fake.add(fixtureObject('mcs/frontend-ipv4.json'));
    await waitFor(() => listener.view.get(LLAMA)?.frontends.length === 1, { message: 'an event' });
    const lastVersion = fake.currentResourceVersion;
    const statusesBefore = listener.statuses().length;

    fake.dropWatches();
    await waitFor(() => fake.watchRequests().length === 2 && listener.synced, { message: 'the re-watch' });
    expect(delays).toEqual([100]);
    const statuses = listener.statuses().slice(statusesBefore);
    expect(statuses.map((s) => s.synced)).toEqual([false, true]);
    expect(statuses[0]?.reason).toMatch(/^watch failed: .*; retrying in 100 ms$/);
    expect(fake.watchRequests()[1]?.query.resourceVersion).toBe(lastVersion);
    expect(source.stats.lists).toBe(1);
    expect(listener.count('resync')).toBe(1);
  });

  it('a list that fails at start is retried until it succeeds', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    fake.failNextLists(500, 'drop', 500);
    const { listener, delays, logs } = startSource(fake);
    await waitFor(() => listener.synced, { message: 'the sync' });
    expect(fake.listRequests()).toHaveLength(4);
    expect(delays).toEqual([100, 200, 400]);
    const statuses = listener.statuses();
    expect(statuses.slice(0, -1).every((s) => !s.synced)).toBe(true);
    expect(statuses.at(-1)).toEqual({ synced: true, reason: undefined });
    expect(statuses.some((s) => s.reason?.includes('HTTP 500'))).toBe(true);
    expect(listener.view.get(LLAMA)?.relays).toEqual([RELAY_URL]);
    expect(logs.filter((l) => l.level === 40 && String(l.msg).startsWith('listing EndpointSlices failed'))).toHaveLength(3);
  });

  it('the backoff grows while failing and starts over once synced', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    fake.failNextLists(500, 500);
    const { listener, delays } = startSource(fake);
    await waitFor(() => listener.synced, { message: 'the sync' });
    expect(delays).toEqual([100, 200]);

    // Synced by the list: the next failure waits the initial delay, and further ones grow again.
    fake.failNextWatches(500, 'drop');
    fake.dropWatches();
    await waitFor(() => fake.watchRequests().length === 4 && listener.synced, { message: 'the re-watch' });
    expect(delays).toEqual([100, 200, 100, 200, 400]);

    // A watch that delivers has recovered: the next drop waits the initial delay again.
    fake.add(fixtureObject('mcs/frontend-ipv4.json'));
    await waitFor(() => listener.view.get(LLAMA)?.frontends.length === 1, { message: 'an event' });
    fake.dropWatches();
    await waitFor(() => fake.watchRequests().length === 5 && listener.synced, { message: 'the next re-watch' });
    expect(delays).toEqual([100, 200, 100, 200, 400, 100]);
  });

  it('caps the backoff at its maximum', async () => {
    const fake = await startFake();
    fake.failNextLists(500, 500, 500, 500, 500, 500);
    const { listener, delays } = startSource(fake);
    await waitFor(() => listener.synced, { message: 'the sync' });
    expect(delays).toEqual([100, 200, 400, 800, 800, 800]);
  });

  it('an unparsable line is logged, counted, and relists', async () => {
    const { fake, listener, source, logs } = await syncedSource();
    fake.sendRaw('{"type":"ADDED","object":{"metadata":');
    await waitFor(() => source.stats.lists === 2 && listener.synced, { message: 'the relist' });
    fake.sendRaw(JSON.stringify({ type: 'ADDED', object: { kind: 'EndpointSlice', metadata: { name: 'x' } } }));
    await waitFor(() => source.stats.lists === 3 && listener.synced, { message: 'the second relist' });
    expect(source.stats.unparsableLines).toBe(2);
    const warned = logs.filter((l) => l.msg === 'unparsable EndpointSlice watch line');
    expect(warned).toHaveLength(2);
    expect(warned[0]).toMatchObject({ line: '{"type":"ADDED","object":{"metadata":' });
  });

  it('a watch the server ends cleanly after delivering is resumed at once, staying synced', async () => {
    const { fake, listener, delays } = await syncedSource();
    fake.add(fixtureObject('mcs/frontend-ipv4.json'));
    await waitFor(() => listener.view.get(LLAMA)?.frontends.length === 1, { message: 'an event' });
    const statusesBefore = listener.statuses().length;
    fake.endWatches();
    await waitFor(() => fake.watchRequests().length === 2 && fake.openWatches === 1, { message: 'the re-watch' });
    expect(fake.watchRequests()[1]?.query.resourceVersion).toBe(fake.currentResourceVersion);
    expect(delays).toEqual([]);
    expect(listener.statuses().slice(statusesBefore)).toEqual([]);
  });

  it('a watch that ends at once without an event backs off, so a flapping server is not hammered', async () => {
    const { fake, listener, delays } = await syncedSource();
    fake.endWatches();
    await waitFor(() => fake.watchRequests().length === 2 && listener.synced, { message: 'the re-watch' });
    expect(delays).toEqual([100]);
    expect(listener.statuses().at(-2)?.reason).toMatch(/^watch ended at once without an event; retrying/);
  });

  it('an in-stream ERROR other than 410 re-watches from the same resourceVersion', async () => {
    const { fake, listener, source, delays } = await syncedSource();
    fake.sendRaw(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' } }));
    await waitFor(() => fake.watchRequests().length === 2 && listener.synced, { message: 'the re-watch' });
    expect(source.stats.lists).toBe(1);
    expect(delays).toEqual([100]);
    expect(fake.watchRequests()[1]?.query.resourceVersion).toBe('1002');
  });

  it('stop() ends the loop quietly, during a watch and during a backoff', async () => {
    const { fake, source, listener, logs } = await syncedSource();
    await source.stop();
    await waitFor(() => fake.openWatches === 0, { message: 'the watch connection to close' });
    expect(listener.synced).toBe(true);
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);

    const failing = await startFake();
    failing.failNextLists(500, 500, 500, 500, 500, 500, 500, 500);
    const slow = startSource(failing, {
      backoff: { initialMs: 60_000, sleep },
    });
    await waitFor(() => failing.listRequests().length === 1 && slow.listener.statuses().length === 2, { message: 'a backoff' });
    const stopping = Date.now();
    await slow.source.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
    expect(failing.listRequests()).toHaveLength(1);
  });

  it('stop() aborts a list the server does not answer, without logging its own abort', async () => {
    const fake = await startFake();
    fake.failNextLists('hang');
    const { source, listener, logs } = startSource(fake);
    await waitFor(() => fake.listRequests().length === 1, { message: 'the list request' });
    const stopping = Date.now();
    await source.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
    expect(listener.statuses()).toEqual([{ synced: false, reason: 'listing EndpointSlices' }]);
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);
  });
});
