// `poolscope pools` against a service with regions (docs/contract.md §7): a REGIONS column (the pool's
// lease regions) only when the reply carries `regions`, then a blank line and one line per region; -o json
// unchanged; under --watch the same table and lines, then a row per change and a stderr line per region
// whose status changes.
import { afterEach, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import type { PoolList } from '../../src/contract/index.js';
import { waitFor } from '../support/wait.js';
import { region, REGION_SINCE, regionPool, startRegionsServer, type RegionsServer } from '../client/regions-support.js';

const running: RegionsServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function serve(list: PoolList): Promise<RegionsServer> {
  const server = await startRegionsServer(list);
  running.push(server);
  return server;
}

function capture() {
  let out = '';
  let err = '';
  const shutdown = new AbortController();
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, shutdown: shutdown.signal };
  return { io, out: () => out, err: () => err, stop: () => shutdown.abort() };
}

async function pools(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = capture();
  const code = await main(['pools', ...args], c.io);
  return { code, out: c.out(), err: c.err() };
}

const LIST: PoolList = {
  complete: false,
  revision: '7',
  pools: [
    regionPool('llama-70b', ['eu-west-1', 'us-east-1']),
    regionPool('qwen-72b', ['us-east-1'], { model: 'm2', location: {} }),
    regionPool('mixtral', ['eu-west-1'], { capacity: [], frontends: [], state: 'frontendless' }),
  ],
  regions: [region('ap-south-1', 'dropped'), region('eu-west-1', 'held'), region('us-east-1', 'ok')],
};

const TABLE = [
  'CLUSTER   NAMESPACE   NAME        MODEL   STATE          CAPACITY   FRONTENDS   LOCATION    REGIONS',
  'c1        llm         llama-70b   m1      live           gpus=8     1           us-east-1   eu-west-1,us-east-1',
  'c1        llm         mixtral     m1      frontendless   <none>     0           us-east-1   eu-west-1',
  'c1        llm         qwen-72b    m2      live           gpus=8     1           <none>      us-east-1',
  '',
].join('\n');

const REGION_LINES = [
  `region ap-south-1: dropped (connect ETIMEDOUT) since ${REGION_SINCE}`,
  `region eu-west-1: incomplete (connect ETIMEDOUT) since ${REGION_SINCE}`,
  'region us-east-1: complete',
  '',
].join('\n');

describe('poolscope pools with regions', () => {
  it('prints a REGIONS column, then a blank line and one line per region', async () => {
    const server = await serve(LIST);
    expect(await pools([`--servers=${server.url}`])).toEqual({
      code: 0,
      out: `${TABLE}\n${REGION_LINES}`,
      err: 'poolscope: the list may be incomplete (complete: false); pools may be missing\n',
    });
  });

  it('prints the region lines also when no pool is listed (or none of --model)', async () => {
    const server = await serve(LIST);
    expect(await pools([`--servers=${server.url}`, '--model', 'nobody/serves-this'])).toEqual({
      code: 0,
      out: REGION_LINES,
      err: 'No pools listed.\npoolscope: the list may be incomplete (complete: false); pools may be missing\n',
    });
  });

  it('shows <none> for a pool without lease regions', async () => {
    const server = await serve({ complete: true, revision: '1', pools: [regionPool('bare', [])], regions: [region('us-east-1', 'ok')] });
    const result = await pools([`--servers=${server.url}`]);
    expect(result.out.split('\n')[1]).toMatch(/ {3}us-east-1 {3}<none>$/);
  });

  it('has no REGIONS column and no region lines when the reply carries no regions', async () => {
    const server = await serve({ complete: true, revision: '1', pools: [regionPool('plain', undefined)] });
    expect(await pools([`--servers=${server.url}`])).toEqual({
      code: 0,
      out: [
        'CLUSTER   NAMESPACE   NAME    MODEL   STATE   CAPACITY   FRONTENDS   LOCATION',
        'c1        llm         plain   m1      live    gpus=8     1           us-east-1',
        '',
      ].join('\n'),
      err: '',
    });
  });

  it('-o json is the body of GET /pools, regions and lease_regions included, as before', async () => {
    const server = await serve(LIST);
    const result = await pools([`--servers=${server.url}`, '-o', 'json']);
    expect(result.code).toBe(0);
    expect(result.out).toBe(`${JSON.stringify(LIST, null, 2)}\n`);
  });

  it('--watch prints the table and region lines, then rows per change and a stderr line per region change', async () => {
    const server = await serve(LIST);
    const c = capture();
    const exited = main(['pools', `--servers=${server.url}`, '--watch'], c.io);
    try {
      await waitFor(() => c.out() === `${TABLE}\n${REGION_LINES}`);
      // eu-west-1's hold runs out: dropped. mixtral (only there) leaves though the list is incomplete;
      // llama-70b (also in us-east-1) stays, now with one lease region.
      server.publish({
        ...LIST,
        revision: '8',
        pools: [{ ...LIST.pools[0]!, lease_regions: ['us-east-1'] }, LIST.pools[1]!],
        regions: [region('ap-south-1', 'dropped'), region('eu-west-1', 'dropped'), region('us-east-1', 'ok')],
      });
      await waitFor(() => c.err().includes('region eu-west-1'));
      await waitFor(() => c.out().split('\n').length === TABLE.split('\n').length + REGION_LINES.split('\n').length + 2);
    } finally {
      c.stop();
    }
    expect(await exited).toBe(0);
    expect(c.out().slice(TABLE.length + 1 + REGION_LINES.length)).toBe(
      [
        'c1        llm         llama-70b   m1      live           gpus=8     1           us-east-1   us-east-1',
        'c1        llm         mixtral     m1      deleted        <none>     0           us-east-1   eu-west-1',
        '',
      ].join('\n'),
    );
    expect(c.err()).toBe(
      [
        `poolscope: watching ${server.url} (incomplete: pools may be missing; none is dropped meanwhile)`,
        `poolscope: region eu-west-1: dropped (connect ETIMEDOUT) since ${REGION_SINCE}`,
        '',
      ].join('\n'),
    );
  });

  it('-o json --watch prints JSON lines as before, and each region line on stderr', async () => {
    const server = await serve(LIST);
    const c = capture();
    const exited = main(['pools', `--servers=${server.url}`, '-w', '-o', 'json'], c.io);
    try {
      await waitFor(() => c.out().split('\n').length === 4);
      await waitFor(() => c.err().includes('region us-east-1'));
    } finally {
      c.stop();
    }
    expect(await exited).toBe(0);
    const lines = c.out().trim().split('\n').map((line) => JSON.parse(line) as { type: string; pool: { name: string; lease_regions: string[] } });
    expect(lines.map((l) => [l.type, l.pool.name, l.pool.lease_regions])).toEqual([
      ['added', 'llama-70b', ['eu-west-1', 'us-east-1']],
      ['added', 'qwen-72b', ['us-east-1']],
      ['added', 'mixtral', ['eu-west-1']],
    ]);
    expect(c.err()).toContain(REGION_LINES.trim().split('\n').map((line) => `poolscope: ${line}`).join('\n'));
  });
});
