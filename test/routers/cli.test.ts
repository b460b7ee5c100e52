// The router commands (docs/contract.md §10): `poolscope routers` (the table, -o json, -o json --watch
// with a line per change), `poolscope router-heartbeat` (registers until stopped; refusals exit 2 naming
// the flag), and `poolscope relay` logging each router change.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { stopAfterEach } from '../support/cleanup.js';
import { captureCliIo } from '../support/logs.js';
import { startService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { listRouters, postRouter } from './support.js';

describe('poolscope routers and router-heartbeat', () => {
  const stopLater = stopAfterEach();

  it('router-heartbeat registers until stopped; routers prints them as a table and as JSON', async () => {
    const service = await startService({ leaseMs: 30_000, staticRouters: [{ id: 'gr-s', url: 'http://10.0.9.1:9100' }] }).then(stopLater);
    const beat = captureCliIo();
    const running = main(['router-heartbeat', `--servers=${service.url}`, '--id=gr-cli', '--url=http://10.0.1.5:9100', '--region=us-east-1', '--zone=us-east-1a'], beat.io);
    await waitFor(async () => (await listRouters(service.url)).routers.some((r) => r.id === 'gr-cli'), { message: 'gr-cli registered' });
    const table = captureCliIo();
    expect(await main(['routers', `--servers=${service.url}`], table.io)).toBe(0);
    expect(table.out()).toBe(
      [
        'ID      SOURCE        REGION     ZONE        URL',
        'gr-cli  registration  us-east-1  us-east-1a  http://10.0.1.5:9100',
        'gr-s    static        -          -           http://10.0.9.1:9100',
        '',
      ].join('\n'),
    );
    const json = captureCliIo();
    expect(await main(['routers', `--servers=${service.url}`, '-o', 'json'], json.io)).toBe(0);
    expect((JSON.parse(json.out()) as { routers: { id: string }[] }).routers.map((r) => r.id)).toEqual(['gr-cli', 'gr-s']);
    beat.stop();
    expect(await running).toBe(0);
    expect(beat.out()).toContain('"msg":"router registered"');
  });

  it('routers -o json --watch prints a line per change, the first list as added', async () => {
    const service = await startService({ leaseMs: 30_000 }).then(stopLater);
    await postRouter(service.url, { id: 'gr-1', url: 'http://10.0.0.1:1' });
    const c = captureCliIo();
    const running = main(['routers', `--servers=${service.url}`, '-o', 'json', '--watch'], c.io);
    await waitFor(() => c.out().includes('gr-1'));
    await postRouter(service.url, { id: 'gr-2', url: 'http://10.0.0.2:1' });
    await waitFor(() => c.out().includes('gr-2'));
    c.stop();
    expect(await running).toBe(0);
    expect(c.out().trim().split('\n').map((line) => JSON.parse(line) as { type: string; router: { id: string } }).map((l) => [l.type, l.router.id])).toEqual([
      ['added', 'gr-1'],
      ['added', 'gr-2'],
    ]);
  });

  it.each([
    [['router-heartbeat', '--url=http://10.0.0.1:1'], 'poolscope: --id: required: the router\'s id\n'],
    [['router-heartbeat', '--id=gr-1'], 'poolscope: --url: required: where PoolRelays reach this router\n'],
    [['router-heartbeat', '--id=GR', '--url=http://10.0.0.1:1'], /^poolscope: --id: must be a DNS-1123 label/],
    [['router-heartbeat', '--id=gr-1', '--url=ftp://x'], 'poolscope: --url: must be an http:// or https:// URL with a host\n'],
    [['routers', '-o', 'yaml'], 'poolscope: --output: must be one of table, json (got "yaml")\n'],
  ])('%j exits 2 with one line naming the flag', async (args, message) => {
    const c = captureCliIo();
    expect(await main(args, c.io)).toBe(2);
    if (typeof message === 'string') expect(c.err()).toBe(message);
    else expect(c.err()).toMatch(message);
  });

  it('poolscope relay logs each router change', async () => {
    const service = await startService({ leaseMs: 30_000 }).then(stopLater);
    const c = captureCliIo();
    const running = main(['relay', `--servers=${service.url}`, '--cluster-id=us-east-1', '--namespace=llm', '--name=logs-routers', '--model=m'], c.io);
    await postRouter(service.url, { id: 'gr-logged', url: 'http://10.0.0.3:1' });
    await waitFor(() => c.out().includes('"msg":"router added"'), { message: 'router added logged' });
    c.stop();
    expect(await running).toBe(0);
    const line = c.out().split('\n').find((l) => l.includes('"msg":"router added"'))!;
    expect(JSON.parse(line)).toMatchObject({ router: 'gr-logged', url: 'http://10.0.0.3:1', change: 'added', routers: 1 });
  });
});
