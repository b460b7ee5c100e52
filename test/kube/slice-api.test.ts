// The two requests under the loop: the typed list and the line-reading watch.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { KubeConfigError, kubeConfigFor } from '../../src/kube/kube-config.js';
import { SliceApi } from '../../src/kube/slice-api.js';
import { parseWatchLine } from '../../src/kube/watch-event.js';
import { waitFor } from '../support/wait.js';
import { fixtureLines } from './helpers.js';
import { fixtureObject, startFake } from './source-harness.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A server whose watch reply is written in the given chunks, then ended. */
async function chunkedServer(chunks: string[], encoding: BufferEncoding = 'utf8'): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // Each chunk on its own turn, so the client reads them as separate chunks.
    const next = (i: number) => {
      if (i === chunks.length) return void res.end();
      res.write(chunks[i]!, encoding, () => setTimeout(() => next(i + 1), 5));
    };
    next(0);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function kubeConfigAt(server: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromClusterAndUser({ name: 'test', server, skipTLSVerify: true }, { name: 'test' });
  return kubeConfig;
}

describe('SliceApi.watch', () => {
  it('reassembles lines split across chunks, skips blank ones, and reads a last line without newline', async () => {
    const url = await chunkedServer(['{"type":"BOOK', 'MARK","object":{}}\n\n{"a":', '1}\n{"b":2}']);
    const api = new SliceApi({ kubeConfig: kubeConfigAt(url) });
    const lines: string[] = [];
    let opened = false;
    const end = await api.watch({
      resourceVersion: '5',
      signal: new AbortController().signal,
      timeoutSeconds: 300,
      idleTimeoutMs: 5_000,
      onOpen: () => void (opened = true),
      onLine: (line) => lines.push(line) > 0,
    });
    expect(opened).toBe(true);
    expect(lines).toEqual(['{"type":"BOOKMARK","object":{}}', '{"a":1}', '{"b":2}']);
    expect(end).toEqual({ kind: 'ended', stoppedByReader: false });
  });

  it('reads a line of exactly the limit; one byte more ends the watch before it is kept, whatever the chunks', async () => {
    const LIMIT = 1024;
    const exact = `{"s":"${'é'.repeat((LIMIT - 8) / 2)}"}`;
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    // A two-byte character split between chunks, then a line one byte over the limit, sent in pieces.
    const bytes = Buffer.from(`${exact}\n{"n":1}\n${'x'.repeat(LIMIT + 1)}\n{"n":2}\n`);
    const cut = [LIMIT - 3, LIMIT + 5, LIMIT + 600, LIMIT + 1500];
    const url = await chunkedServer([0, ...cut].map((from, i) => bytes.subarray(from, cut[i] ?? bytes.length).toString('latin1')), 'latin1');
    const api = new SliceApi({ kubeConfig: kubeConfigAt(url), maxLineBytes: LIMIT });
    const lines: string[] = [];
    const end = await api.watch({
      resourceVersion: '5',
      signal: new AbortController().signal,
      timeoutSeconds: 300,
      idleTimeoutMs: 5_000,
      onOpen: () => undefined,
      onLine: (line) => lines.push(line) > 0,
    });
    expect(lines).toEqual([exact, '{"n":1}']);
    expect(end).toEqual({ kind: 'line_too_long', limitBytes: LIMIT });
  });

  it('a last line without newline past the limit ends the watch too', async () => {
    const url = await chunkedServer(['{"n":1}\n', 'y'.repeat(600), 'y'.repeat(600)]);
    const api = new SliceApi({ kubeConfig: kubeConfigAt(url), maxLineBytes: 1000 });
    const lines: string[] = [];
    const end = await api.watch({
      resourceVersion: '5',
      signal: new AbortController().signal,
      timeoutSeconds: 300,
      idleTimeoutMs: 5_000,
      onOpen: () => undefined,
      onLine: (line) => lines.push(line) > 0,
    });
    expect(lines).toEqual(['{"n":1}']);
    expect(end).toEqual({ kind: 'line_too_long', limitBytes: 1000 });
  });

  it('stops reading when the reader says so', async () => {
    const url = await chunkedServer(['{"n":1}\n{"n":2}\n{"n":3}\n']);
    const api = new SliceApi({ kubeConfig: kubeConfigAt(url) });
    const lines: string[] = [];
    const end = await api.watch({
      resourceVersion: '5',
      signal: new AbortController().signal,
      timeoutSeconds: 300,
      idleTimeoutMs: 5_000,
      onOpen: () => undefined,
      onLine: (line) => lines.push(line) < 2,
    });
    expect(lines).toEqual(['{"n":1}', '{"n":2}']);
    expect(end).toEqual({ kind: 'ended', stoppedByReader: true });
  });

  it('rejects with the error of a reader that throws, and closes the connection', async () => {
    const fake = await startFake();
    const api = new SliceApi({ kubeConfig: fake.kubeConfig() });
    const watching = api.watch({
      resourceVersion: fake.currentResourceVersion,
      signal: new AbortController().signal,
      timeoutSeconds: 300,
      idleTimeoutMs: 5_000,
      onOpen: () => undefined,
      onLine: () => {
        throw new Error('reader failed');
      },
    });
    await waitFor(() => fake.openWatches === 1, { message: 'the watch' });
    fake.add(fixtureObject('mcs/relay-ready.json'));
    await expect(watching).rejects.toThrow('reader failed');
    await waitFor(() => fake.openWatches === 0, { message: 'the connection closed' });
  });

  it('gives up a watch that delivers no line for the idle timeout after its last one (a bookmark counts)', async () => {
    const fake = await startFake();
    const api = new SliceApi({ kubeConfig: fake.kubeConfig() });
    let lines = 0;
    const watching = api.watch({
      resourceVersion: fake.currentResourceVersion,
      signal: new AbortController().signal,
      timeoutSeconds: 300,
      idleTimeoutMs: 400,
      onOpen: () => undefined,
      onLine: () => ++lines > 0,
    });
    await waitFor(() => fake.openWatches === 1, { message: 'the watch' });
    fake.bookmark();
    await waitFor(() => lines === 1, { message: 'the bookmark' });
    expect(await watching).toEqual({ kind: 'idle', idleMs: 400 });
    await waitFor(() => fake.openWatches === 0, { message: 'the connection closed' });
  });

  it('refuses plain http without skipTLSVerify, as the client library does', async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromClusterAndUser({ name: 'test', server: 'http://127.0.0.1:1', skipTLSVerify: false }, { name: 'test' });
    const end = await new SliceApi({ kubeConfig }).watch({
      resourceVersion: '1',
      signal: new AbortController().signal,
      timeoutSeconds: 300,
      idleTimeoutMs: 5_000,
      onOpen: () => undefined,
      onLine: () => true,
    });
    expect(end.kind).toBe('failed');
  });
});

describe('SliceApi.list', () => {
  it('reads items without kind/apiVersion, and sets aside items that are not EndpointSlices', async () => {
    const fake = await startFake();
    fake.add(fixtureObject('mcs/relay-ready.json'));
    const { addressType: _dropped, ...broken } = fixtureObject('mcs/frontend-ipv4.json');
    fake.add(broken as ReturnType<typeof fixtureObject>);
    const list = await new SliceApi({ kubeConfig: fake.kubeConfig() }).list(new AbortController().signal);
    expect(list.resourceVersion).toBe('1002');
    expect(list.slices.map((s) => s.metadata.name)).toEqual(['llama-70b-pool-relay-kq7wz']);
    expect(list.invalid).toEqual([{ item: 'dynamo/llama-70b-frontend-d4bgx', error: expect.stringMatching(/^addressType/) }]);
    // Only the fields poolscope reads are kept.
    expect(Object.keys(list.slices[0]!.metadata).sort()).toEqual(['annotations', 'labels', 'name', 'namespace', 'resourceVersion', 'uid']);
  });
});

describe('parseWatchLine', () => {
  it('reads events, bookmarks and the recorded 410 line', () => {
    const [added, , bookmark] = fixtureLines('mcs/watch.jsonl');
    expect(parseWatchLine(added!)).toMatchObject({ kind: 'event', type: 'ADDED' });
    expect(parseWatchLine(bookmark!)).toEqual({ kind: 'bookmark', resourceVersion: '48213600' });
    expect(parseWatchLine(fixtureLines('watch-expired.jsonl')[0]!)).toEqual({
      kind: 'error',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 48213377 (48219883)',
    });
  });

  it('calls anything else unparsable', () => {
    for (const line of [
      'not json',
      '[]',
      '{"object":{}}',
      '{"type":"ADDED","object":{"metadata":{"name":"x"}}}',
      '{"type":"BOOKMARK","object":{"metadata":{}}}',
      '{"type":"SOMETHING","object":{}}',
    ]) {
      expect(parseWatchLine(line).kind, line).toBe('unparsable');
    }
  });
});

describe('kubeConfigFor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poolscope-kubeconfig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'config');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "http://127.0.0.1:6443", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  );

  it('loads a given kubeconfig file', () => {
    expect(kubeConfigFor({ kubeconfigPath: file }).getCurrentCluster()?.server).toBe('http://127.0.0.1:6443');
  });

  it('loads KUBECONFIG by default', () => {
    const previous = process.env.KUBECONFIG;
    process.env.KUBECONFIG = file;
    try {
      expect(kubeConfigFor().getCurrentCluster()?.server).toBe('http://127.0.0.1:6443');
    } finally {
      if (previous === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previous;
    }
  });

  /** Runs `body` with KUBECONFIG and HOME as given (undefined: unset), then puts them back. */
  function withEnv<T>(env: { KUBECONFIG?: string; HOME?: string }, body: () => T): T {
    const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
    const set = (name: 'KUBECONFIG' | 'HOME', value: string | undefined) => (value === undefined ? delete process.env[name] : (process.env[name] = value));
    set('KUBECONFIG', env.KUBECONFIG);
    set('HOME', env.HOME);
    try {
      return body();
    } finally {
      set('KUBECONFIG', saved.KUBECONFIG);
      set('HOME', saved.HOME);
    }
  }

  it('refuses to fall back to http://localhost:8080 when it finds no configuration, saying what it looked for', () => {
    const home = mkdtempSync(join(dir, 'home-'));
    expect(() => withEnv({ HOME: home }, () => kubeConfigFor())).toThrow(
      new KubeConfigError(
        'no Kubernetes API configured: KUBECONFIG is not set, there is no ~/.kube/config, and this is no pod with a service account; ' +
          'set KUBECONFIG to a kubeconfig file, or run in a pod (deploy/README.md)',
      ),
    );
  });

  it('names the kubeconfig it cannot load', () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const nowhere = join(dir, 'nowhere');
    expect(() => withEnv({ HOME: home, KUBECONFIG: nowhere }, () => kubeConfigFor())).toThrow(`cannot load the kubeconfig ${JSON.stringify(nowhere)} (ENOENT)`);
    expect(() => kubeConfigFor({ kubeconfigPath: nowhere })).toThrow(KubeConfigError);
  });
});
