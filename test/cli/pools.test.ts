// `poolscope pools` for a known set of pools: the table, -o json, --model, --watch (table rows, then a
// row per change, `deleted` for a removed pool) and -o json --watch (a JSON line per change); an
// incomplete list is said on stderr; refusals exit 2 and an unreachable service exits 1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { listPools, postJson } from '../support/http.js';
import { captureCliIo } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';

async function pools(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureCliIo();
  const code = await main(['pools', ...args], c.io);
  return { code, out: c.out(), err: c.err() };
}

const KNOWN = [
  registration({ cluster_id: 'us-east-1', namespace: 'llm', name: 'llama-70b' }),
  registration({
    cluster_id: 'eu-west-1',
    namespace: 'llm',
    name: 'mixtral',
    model: 'mistralai/Mixtral-8x7B-Instruct-v0.1',
    capabilities: [],
    capacity: [],
    location: {},
    frontends: [],
  }),
  registration({
    cluster_id: 'us-east-1',
    namespace: 'batch',
    name: 'qwen-72b',
    model: 'Qwen/Qwen2.5-72B-Instruct',
    capacity: [
      { name: 'gpus', value: 4 },
      { name: 'memory_gib', value: 640 },
    ],
    location: { region: 'us-east-1' },
    frontends: ['http://10.0.0.8:8000', 'http://10.0.0.9:8000'],
  }),
];

const TABLE = [
  'CLUSTER     NAMESPACE   NAME        MODEL                                  STATE          CAPACITY                FRONTENDS   LOCATION',
  'eu-west-1   llm         mixtral     mistralai/Mixtral-8x7B-Instruct-v0.1   frontendless   <none>                  0           <none>',
  'us-east-1   batch       qwen-72b    Qwen/Qwen2.5-72B-Instruct              live           gpus=4,memory_gib=640   2           us-east-1',
  'us-east-1   llm         llama-70b   meta-llama/Llama-3.1-70B-Instruct      live           gpus=8                  1           us-east-1/us-east-1a',
  '',
].join('\n');

describe('poolscope pools', () => {
  const redis = useRedis('pools-cli');
  let service: TestService;
  let servers: string;

  beforeAll(async () => {
    service = await startService({
      registrationStorage: 'redis',
      redisUrl: redis.url,
      redisPrefix: redis.prefix,
      leaseMs: 60_000,
    });
    servers = `--servers=${service.url}`;
    for (const body of KNOWN) expect((await postJson(service.url, body)).status).toBe(200);
    await waitFor(async () => {
      const list = await listPools(service.url);
      return list.complete && list.pools.length === 3;
    });
  });
  afterAll(() => service?.stop());

  it('prints a table ordered by key', async () => {
    expect(await pools([servers])).toEqual({ code: 0, out: TABLE, err: '' });
  });

  it('prints the body of GET /pools with -o json, and filters by --model', async () => {
    const body = await listPools(service.url);
    const result = await pools([servers, '-o', 'json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out)).toEqual(body);
    expect(result.out).toBe(`${JSON.stringify(body, null, 2)}\n`);

    const filtered = await pools([servers, '--output=json', '--model', 'Qwen/Qwen2.5-72B-Instruct']);
    expect(JSON.parse(filtered.out).pools.map((p: { name: string }) => p.name)).toEqual(['qwen-72b']);
    const none = await pools([servers, '--model', 'nobody/serves-this']);
    expect(none).toEqual({ code: 0, out: '', err: 'No pools listed.\n' });
  });

  it('--watch prints the table, then a row per change as it comes, like kubectl get -w', async () => {
    const c = captureCliIo();
    const running = main(['pools', servers, '--watch'], c.io);
    try {
      await waitFor(() => c.out() === TABLE);
      expect((await postJson(service.url, registration({ cluster_id: 'us-east-1', namespace: 'llm', name: 'llama-70b', frontends: [] }))).status).toBe(200);
      await waitFor(() => c.out().length > TABLE.length);
      expect(c.out().slice(TABLE.length)).toBe(
        'us-east-1   llm         llama-70b   meta-llama/Llama-3.1-70B-Instruct      frontendless   gpus=8                  0           us-east-1/us-east-1a\n',
      );
    } finally {
      c.stop();
    }
    expect(await running).toBe(0);
    expect(c.err()).toBe(`poolscope: watching ${service.url}\n`);
  });

  it('-o json --watch prints one JSON line per change, the first list as added', async () => {
    const c = captureCliIo();
    const running = main(['pools', servers, '-w', '-o', 'json', '--model', 'mistralai/Mixtral-8x7B-Instruct-v0.1'], c.io);
    try {
      await waitFor(() => c.out().split('\n').length === 2);
      const body = registration({ cluster_id: 'eu-west-1', namespace: 'llm', name: 'mixtral', model: 'mistralai/Mixtral-8x7B-Instruct-v0.1', capacity: [{ name: 'gpus', value: 2 }] });
      expect((await postJson(service.url, body)).status).toBe(200);
      await waitFor(() => c.out().split('\n').length === 3);
    } finally {
      c.stop();
    }
    expect(await running).toBe(0);
    const lines = c.out().trim().split('\n').map((line) => JSON.parse(line) as { type: string; pool: { name: string; capacity: unknown } });
    expect(lines.map((l) => [l.type, l.pool.name])).toEqual([
      ['added', 'mixtral'],
      ['updated', 'mixtral'],
    ]);
    expect(lines[1]!.pool.capacity).toEqual([{ name: 'gpus', value: 2 }]);
  });

  it('refuses bad flags with exit 2 and one line', async () => {
    expect(await pools([servers, '-o', 'yaml'])).toEqual({ code: 2, out: '', err: 'poolscope: --output: must be one of table, json (got "yaml")\n' });
    expect(await pools(['--watch=yes'])).toEqual({ code: 2, out: '', err: 'poolscope: --watch: is a switch: true, false, 1 or 0 (got "yes")\n' });
    expect(await pools(['-x'])).toEqual({ code: 2, out: '', err: 'poolscope: -x: unknown flag (poolscope pools --help lists the flags)\n' });
    expect(await pools(['--servers', 'localhost:8080'])).toMatchObject({ code: 2, err: expect.stringMatching(/^poolscope: --servers: "localhost:8080" must be an http/) });
  });

  it('exits 1 naming each replica when none answers', async () => {
    const result = await pools(['--servers=http://127.0.0.1:1']);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^poolscope: no poolscope replica listed the pools \(http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED[^\n]*\)\n$/);
  });
});

describe('poolscope pools on a just-started memory store', () => {
  it('says on stderr that the list may be incomplete', async () => {
    const service = await startService({ leaseMs: 60_000 });
    try {
      expect((await postJson(service.url, KNOWN[0])).status).toBe(200);
      const result = await pools([`--servers=${service.url}`]);
      expect(result.code).toBe(0);
      expect(result.out.split('\n')[1]).toMatch(/^us-east-1 +llm +llama-70b /);
      expect(result.err).toBe('poolscope: the list may be incomplete (complete: false); pools may be missing\n');
    } finally {
      await service.stop();
    }
  });
});

describe('poolscope pools --watch keeps its columns aligned', () => {
  /** Where each cell starts (no cell holds a space: every row has a word per column). */
  const starts = (line: string) => [...line.matchAll(/\S+/g)].map((m) => m.index);

  it('widens a column for a wider row and prints the header again above it; every row lines up with the header above it', async () => {
    const service = await startService({ leaseMs: 60_000 });
    expect((await postJson(service.url, registration({ name: 'a', model: 'm/short' }))).status).toBe(200);
    const c = captureCliIo();
    const running = main(['pools', `--servers=${service.url}`, '--watch'], c.io);
    try {
      await waitFor(() => c.out().includes('m/short'));
      // Started beside a simulation: a model name longer than any listed so far, then a short row again.
      expect((await postJson(service.url, registration({ name: 'b', model: 'Qwen/Qwen2.5-72B-Instruct-with-a-long-name' }))).status).toBe(200);
      await waitFor(() => c.out().includes('with-a-long-name'));
      expect((await postJson(service.url, registration({ name: 'c', model: 'm/x' }))).status).toBe(200);
      await waitFor(() => c.out().includes('m/x '));
    } finally {
      c.stop();
    }
    expect(await running).toBe(0);
    const lines = c.out().split('\n').filter((line) => line !== '');
    const headers = lines.flatMap((line, i) => (line.startsWith('CLUSTER ') ? [i] : []));
    // The first list's header, and one more above the wider row: no other.
    expect(headers.length).toBe(2);
    expect(lines[headers[1]! + 1]).toContain('with-a-long-name');
    let header = '';
    for (const line of lines) {
      if (line.startsWith('CLUSTER ')) header = line;
      else expect(starts(line), `${line}\nunder\n${header}`).toEqual(starts(header));
    }
    // Nothing was cut short.
    expect(c.out()).toContain(' Qwen/Qwen2.5-72B-Instruct-with-a-long-name ');
    await service.stop();
  });
});
