// Static routers (`--router ID=URL`, repeatable, every mode) and the MCS router flags: what the parser
// takes, what it refuses with one line naming the flag, and a service started with static routers listing
// them (complete, source static), beside a registration of another id, and winning over one of the same id.
import { describe, expect, it } from 'vitest';
import { parseServeFlags } from '../../src/cli/flags.js';
import { DEFAULT_CONFIG } from '../../src/service/config.js';
import { stopAfterEach } from '../support/cleanup.js';
import { startService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { listRouters, postRouter } from './support.js';

describe('--router flags', () => {
  it('takes --router more than once, in every mode, and in the environment separated by spaces', () => {
    const argv = ['--router', 'gr-0=http://10.0.1.5:9100', '--router=gr-1=https://[fd00::7]:9100/relay'];
    for (const mode of ['registrations', 'mcs', 'karmada']) {
      const result = parseServeFlags([...argv, `--pool-discovery=${mode}`], {});
      expect(result.ok && result.config.staticRouters).toEqual([
        { id: 'gr-0', url: 'http://10.0.1.5:9100' },
        { id: 'gr-1', url: 'https://[fd00::7]:9100/relay' },
      ]);
    }
    const fromEnv = parseServeFlags([], { POOLSCOPE_SERVE_ROUTER: ' gr-0=http://a:1  gr-1=http://b:2 ' });
    expect(fromEnv.ok && fromEnv.config.staticRouters.map((r) => r.id)).toEqual(['gr-0', 'gr-1']);
    // The table's default is never written into.
    expect(DEFAULT_CONFIG.staticRouters).toEqual([]);
  });

  it('takes the MCS router flags in mcs and karmada', () => {
    const result = parseServeFlags(['--pool-discovery=karmada', '--router-service-name=gr', '--router-port-name=grpc'], {});
    expect(result.ok && [result.config.routerServiceName, result.config.routerPortName]).toEqual(['gr', 'grpc']);
  });

  it.each([
    [['--router', 'gr-0'], '--router', /must be ID=URL/],
    [['--router', 'GR=http://a:1'], '--router', /the id must be a DNS-1123 label/],
    [['--router', 'gr.0=http://a:1'], '--router', /the id must be a DNS-1123 label/],
    [['--router', 'gr-0=ftp://a'], '--router', /the url must be an http:\/\/ or https:\/\/ URL/],
    [['--router', 'gr-0=http://'], '--router', /the url must be an http:\/\/ or https:\/\/ URL/],
    [['--router', 'gr-0=http://a:1', '--router', 'gr-0=http://b:1'], '--router', /"gr-0" is given twice/],
    [['--router='], '--router', /must not be empty/],
    [['--router', '--listen=0.0.0.0:1'], '--router', /needs a value/],
    [['--router-service-name', 'Global_Router', '--pool-discovery=mcs'], '--router-service-name', /must be a Service name/],
    [['--router-port-name='], '--router-port-name', /must not be empty/],
    [['--router-port-name=grpc'], '--router-port-name', /only applies with --pool-discovery mcs or karmada/],
    [['--router-service-name=gr'], '--router-service-name', /only applies with --pool-discovery mcs or karmada/],
  ])('refuses %j naming %s', (argv, flag, message) => {
    const result = parseServeFlags(argv, {});
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.flag).toBe(flag);
    expect(result.message).toMatch(message);
    expect(result.message).not.toContain('\n');
  });
});

describe('static routers in the service', () => {
  const stopLater = stopAfterEach();

  it('lists them from the start, complete, beside registered ones; a static router wins over a registration of its id', async () => {
    const service = await startService({
      socket: false,
      staticRouters: [
        { id: 'gr-static', url: 'http://10.0.9.1:9100' },
        { id: 'gr-both', url: 'http://10.0.9.2:9100' },
      ],
    }).then(stopLater);
    const first = await listRouters(service.app);
    expect(first.routers).toEqual([
      { id: 'gr-both', url: 'http://10.0.9.2:9100', source: 'static' },
      { id: 'gr-static', url: 'http://10.0.9.1:9100', source: 'static' },
    ]);
    expect((await postRouter(service.app, { id: 'gr-both', url: 'http://10.0.0.1:1' })).status).toBe(200);
    expect((await postRouter(service.app, { id: 'gr-own', url: 'http://10.0.0.2:1' })).status).toBe(200);
    const list = await waitFor(async () => {
      const body = await listRouters(service.app);
      return body.routers.length === 3 && body;
    });
    expect(list.routers.map((r) => [r.id, r.source, r.url])).toEqual([
      ['gr-both', 'static', 'http://10.0.9.2:9100'],
      ['gr-own', 'registration', 'http://10.0.0.2:1'],
      ['gr-static', 'static', 'http://10.0.9.1:9100'],
    ]);
  });
});
