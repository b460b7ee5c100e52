// One suite, both flavours: the recorded mcs and karmada lists and watch lines (the lines byte for byte)
// served by the fake API server and read end to end by the slice source.
import { describe, expect, it } from 'vitest';
import type { PoolEndpoints } from '../../src/kube/types.js';
import { waitFor } from '../support/wait.js';
import { fixtureLines, fixtureText } from './helpers.js';
import { startFake, startSource } from './source-harness.js';

interface Flavour {
  mode: 'mcs' | 'karmada';
  listed: Record<string, PoolEndpoints>;
  /** After watch.jsonl: ADDED phi-4 relay, MODIFIED llama relay (not ready), DELETED mistral frontend. */
  watched: Record<string, PoolEndpoints>;
  mistralSlice: string;
}

const none: PoolEndpoints = { relays: [], frontends: [], frontendSlicesWithPort: false };

const mcsListed: Record<string, PoolEndpoints> = {
  'gpu-east-1/dynamo/gemma-27b': {
    relays: [],
    frontends: ['http://10.12.7.31:8000', 'http://10.12.7.32:8000'],
    frontendSlicesWithPort: true,
  },
  'gpu-east-1/dynamo/llama-70b': {
    relays: ['http://10.12.3.41:9000'],
    frontends: ['http://10.12.5.17:8000'],
    frontendSlicesWithPort: true,
  },
  'gpu-west-2/dynamo/llama-70b': { ...none, relays: ['http://10.40.2.19:9000'] },
  'gpu-east-1/dynamo/mistral-7b': none,
  'gpu-v6-1/dynamo/qwen3-32b': { relays: [], frontends: ['http://[fd00:a10:6:2::2f]:8000'], frontendSlicesWithPort: true },
};

const karmadaListed: Record<string, PoolEndpoints> = {
  'member-us-east-1/dynamo/gemma-27b': {
    relays: [],
    frontends: ['http://10.20.7.31:8000', 'http://10.20.7.32:8000'],
    frontendSlicesWithPort: true,
  },
  'member-us-east-1/dynamo/llama-70b': {
    relays: ['http://10.20.3.41:9000'],
    frontends: ['http://10.20.5.17:8000'],
    frontendSlicesWithPort: true,
  },
  'member-eu-west-2/dynamo/llama-70b': { ...none, relays: ['http://10.40.2.19:9000'] },
  'member-us-east-1/dynamo/mistral-7b': none,
  'member-ipv6-1/dynamo/qwen3-32b': { relays: [], frontends: ['http://[fd00:a20:6:2::2f]:8000'], frontendSlicesWithPort: true },
};

function afterWatch(listed: Record<string, PoolEndpoints>, cluster: string, phiRelay: string): Record<string, PoolEndpoints> {
  const watched = { ...listed };
  delete watched[`${cluster}/dynamo/mistral-7b`];
  watched[`${cluster}/dynamo/phi-4`] = { ...none, relays: [phiRelay] };
  watched[`${cluster}/dynamo/llama-70b`] = { ...listed[`${cluster}/dynamo/llama-70b`]!, relays: [] };
  return watched;
}

const flavours: Flavour[] = [
  {
    mode: 'mcs',
    listed: mcsListed,
    watched: afterWatch(mcsListed, 'gpu-east-1', 'http://10.12.4.57:9000'),
    mistralSlice: 'dynamo/mistral-7b-frontend-w2lck',
  },
  {
    mode: 'karmada',
    listed: karmadaListed,
    watched: afterWatch(karmadaListed, 'member-us-east-1', 'http://10.20.4.57:9000'),
    mistralSlice: 'dynamo/imported-member-us-east-1-mistral-7b-frontend-9hd2v',
  },
];

describe.each(flavours)('$mode fixtures end to end', ({ mode, listed, watched, mistralSlice }) => {
  it('list.json then watch.jsonl give the expected pools', async () => {
    const fake = await startFake();
    const list = fixtureText(`${mode}/list.json`);
    fake.loadList(list);
    const { listener, source, logs } = startSource(fake, { mode });
    await waitFor(() => listener.synced, { message: 'the first sync' });
    expect(Object.fromEntries(listener.view)).toEqual(listed);
    const listVersion = (JSON.parse(list) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    expect(fake.watchRequests()[0]?.query).toMatchObject({ resourceVersion: listVersion, allowWatchBookmarks: 'true' });

    const lines = fixtureLines(`${mode}/watch.jsonl`);
    for (const line of lines) fake.replayWatchLine(line);
    const lastVersion = (JSON.parse(lines.at(-1)!) as { object: { metadata: { resourceVersion: string } } }).object
      .metadata.resourceVersion;
    await waitFor(() => source.stats.resourceVersion === lastVersion, { message: 'the last bookmark' });
    expect(Object.fromEntries(listener.view)).toEqual(watched);
    // Three events, three pools changed; bookmarks change none.
    expect(listener.count('update')).toBe(3);
    expect(listener.count('resync')).toBe(1);

    // The mistral frontend slice lacked the named port: warned once, with its pool and slice.
    const portWarnings = logs.filter((l) => l.level === 40 && l.port_name === 'http');
    expect(portWarnings).toHaveLength(1);
    expect(portWarnings[0]).toMatchObject({ slice: mistralSlice });
    expect(source.stats).toMatchObject({ unparsableLines: 0, failures: 0, lists: 1 });
  });

  it('a relist after the 410 line gives the same view as the watch did', async () => {
    const fake = await startFake();
    fake.loadList(fixtureText(`${mode}/list.json`));
    const { listener, source } = startSource(fake, { mode });
    await waitFor(() => listener.synced, { message: 'the first sync' });
    // The watch is lost before any recorded event reaches it, and the cache compacts past them.
    fake.dropWatches();
    for (const line of fixtureLines(`${mode}/watch.jsonl`)) fake.replayWatchLine(line);
    fake.compact();
    await waitFor(() => source.stats.lists === 2 && listener.synced, { message: 'the relist' });
    expect(Object.fromEntries(listener.view)).toEqual(watched);
    expect(listener.count('update')).toBe(0);
    expect(source.stats.expired).toBe(1);
  });
});
