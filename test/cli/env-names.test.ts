// Environment names that cannot collide (docs/contract.md §6, README "Configuration"): each command reads
// its own POOLSCOPE_<COMMAND>_<FLAG> names and the few shared ones; a name of another command, or an old
// POOLSCOPE_<FLAG> name, is never obeyed and is said once at start. A switch takes true/false/1/0.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { commandEnvName, envName, envNameTable, ignoredEnv, sharedEnvName } from '../../src/cli/env-names.js';
import { main } from '../../src/cli/main.js';
import { listPools, postJson } from '../support/http.js';
import { captureCliIo } from '../support/logs.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

/** What a shared name may stand for: how a client reaches the replicas, and the log level. */
const SHARED_FLAGS = ['ca-file', 'cert-file', 'key-file', 'log-level', 'servers', 'token-file'];

describe('the names of every command', () => {
  const rows = envNameTable(COMMANDS);

  it('each name stands for one flag, whoever reads it', () => {
    for (const row of rows) {
      const flags = COMMANDS.flatMap((command) => command.flags.filter((flag) => envName(command.name, flag) === row.name).map((flag) => flag.name));
      expect(new Set(flags), row.name).toEqual(new Set([row.flag]));
    }
  });

  it('a shared name is POOLSCOPE_<FLAG>, only for the flags that mean the same everywhere; every other name is POOLSCOPE_<COMMAND>_<FLAG> of a command that reads it', () => {
    expect(rows.filter((row) => row.shared).map((row) => row.flag).sort()).toEqual(SHARED_FLAGS);
    for (const row of rows) {
      if (row.shared) {
        expect(row.name).toBe(sharedEnvName(row.flag));
        continue;
      }
      const owner = row.commands.find((command) => row.name === commandEnvName(command, row.flag));
      expect(owner, `${row.name}: no reader owns it`).toBeDefined();
    }
  });

  it('the issue\'s clashes are gone: relay and pools read different model names, serve and relay different namespaces and regions', () => {
    const name = (command: string, flag: string) => envName(command, COMMANDS.find((c) => c.name === command)!.flags.find((f) => f.name === flag)!);
    expect(name('relay', 'model')).toBe('POOLSCOPE_RELAY_MODEL');
    expect(name('pools', 'model')).toBe('POOLSCOPE_POOLS_MODEL');
    expect(name('serve', 'namespace')).toBe('POOLSCOPE_SERVE_NAMESPACE');
    expect(name('relay', 'namespace')).toBe('POOLSCOPE_RELAY_NAMESPACE');
    expect(name('serve', 'region')).not.toBe(name('relay', 'region'));
    expect(name('pools', 'watch')).toBe('POOLSCOPE_POOLS_WATCH');
  });

  it('finds what a command does not read: other commands\' names and old names, never a shared one or a stranger', () => {
    const pools = COMMANDS.find((c) => c.name === 'pools')!;
    const env = {
      POOLSCOPE_RELAY_MODEL: 'x',
      POOLSCOPE_MODEL: 'x',
      POOLSCOPE_LEASE_DURATION_SECS: '30',
      POOLSCOPE_POOLS_OUTPUT: 'json',
      POOLSCOPE_SERVERS: 'http://a:1',
      POOLSCOPE_LOG_LEVEL: 'debug',
      POOLSCOPE_SKIP_BUILD: '1',
      POOLSCOPE_SERVE_LISTEN: undefined,
    };
    expect(ignoredEnv(pools, COMMANDS, env)).toEqual([
      { name: 'POOLSCOPE_LEASE_DURATION_SECS', why: 'an old name: serve reads POOLSCOPE_SERVE_LEASE_DURATION_SECS' },
      { name: 'POOLSCOPE_MODEL', why: 'an old name: pools reads POOLSCOPE_POOLS_MODEL', insteadOf: { flag: 'model', name: 'POOLSCOPE_POOLS_MODEL' } },
      { name: 'POOLSCOPE_RELAY_MODEL', why: 'read by relay' },
    ]);
  });
});

describe('poolscope pools in an environment set for a relay', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ leaseMs: 60_000, registrationStorage: 'memory' });
    expect((await postJson(service.url, registration())).status).toBe(200);
    await waitFor(async () => (await listPools(service.url)).pools.length === 1);
  });
  afterAll(() => service?.stop());

  async function pools(env: Record<string, string>, args: string[] = []) {
    const c = captureCliIo(env);
    const code = await main(['pools', `--servers=${service.url}`, ...args], c.io);
    return { code, out: c.out(), err: c.err() };
  }

  it.each([
    ['POOLSCOPE_RELAY_MODEL', 'read by relay'],
    ['POOLSCOPE_MODEL', 'an old name: pools reads POOLSCOPE_POOLS_MODEL'],
  ])('%s=another model: every pool is listed, and one stderr line says the name was ignored', async (name, why) => {
    const result = await pools({ [name]: 'Qwen/Qwen2.5-72B-Instruct' });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^CLUSTER .*\nus-east-1 +llm +llama-70b +meta-llama\/Llama-3\.1-70B-Instruct /);
    const lines = result.err.split('\n').filter((line) => line !== '');
    expect(lines.filter((line) => line.includes('warning'))).toEqual([`poolscope: warning: ignoring environment names pools does not read: ${name} (${why})`]);
  });

  it('POOLSCOPE_POOLS_MODEL, its own name, is obeyed, and warns of nothing', async () => {
    const result = await pools({ POOLSCOPE_POOLS_MODEL: 'Qwen/Qwen2.5-72B-Instruct' });
    expect(result).toMatchObject({ code: 0, out: '' });
    expect(result.err).toMatch(/^No pools listed\.\n/);
    expect(result.err).not.toContain('warning');
  });

  it.each([
    ['POOLSCOPE_POOLS_WATCH', '1', 'watch'],
    ['POOLSCOPE_POOLS_WATCH', 'true', 'watch'],
    ['POOLSCOPE_POOLS_WATCH', '0', 'list'],
    ['POOLSCOPE_POOLS_WATCH', 'false', 'list'],
  ])('the switch %s=%s: a %s', async (name, value, mode) => {
    const c = captureCliIo({ [name]: value });
    const running = main(['pools', `--servers=${service.url}`, '-o', 'json'], c.io);
    if (mode === 'watch') {
      // A watch prints a JSON line per pool and goes on until stopped.
      await waitFor(() => c.out().includes('"type":"added"'));
      c.stop();
    }
    expect(await running).toBe(0);
    if (mode === 'list') expect(JSON.parse(c.out())).toMatchObject({ pools: [{ name: 'llama-70b' }] });
  });

  it.each([['--watch=1'], ['--watch=true'], ['-w']])('%s watches; --watch=0 and --watch=false list once', async (flag) => {
    const c = captureCliIo();
    const running = main(['pools', `--servers=${service.url}`, '-o', 'json', flag], c.io);
    await waitFor(() => c.out().includes('"type":"added"'));
    c.stop();
    expect(await running).toBe(0);
    for (const off of ['--watch=0', '--watch=false']) {
      const once = await pools({}, ['-o', 'json', off]);
      expect(once.code).toBe(0);
      expect(JSON.parse(once.out)).toMatchObject({ pools: [{ name: 'llama-70b' }] });
    }
  });

  it('a switch refuses anything but true, false, 1 or 0, on the command line and from the environment', async () => {
    expect(await pools({}, ['--watch=yes'])).toMatchObject({ code: 2, err: 'poolscope: --watch: is a switch: true, false, 1 or 0 (got "yes")\n' });
    expect(await pools({ POOLSCOPE_POOLS_WATCH: 'on' })).toMatchObject({
      code: 2,
      err: 'poolscope: --watch: is a switch: true, false, 1 or 0 (got "on") (from POOLSCOPE_POOLS_WATCH)\n',
    });
  });
});

describe('a refusal of a flag whose old name is set', () => {
  it('names the name to set instead', async () => {
    const c = captureCliIo({ POOLSCOPE_REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(await main(['serve', '--registration-storage=redis'], c.io)).toBe(2);
    expect(c.err()).toBe(
      'poolscope: --redis-url: required by --registration-storage redis (POOLSCOPE_REDIS_URL is not read: set POOLSCOPE_SERVE_REDIS_URL)\n',
    );
  });
});

describe('one env block shared by serve and a relay sidecar', () => {
  // What a pod's ConfigMap would give both containers: the relay's registration fields, old and new
  // names, and the client names a router beside them would read.
  const SHARED_BLOCK = {
    POOLSCOPE_NAMESPACE: 'llm',
    POOLSCOPE_REGION: 'us-east-1',
    POOLSCOPE_RELAY_NAMESPACE: 'llm',
    POOLSCOPE_RELAY_REGION: 'us-east-1',
    POOLSCOPE_RELAY_CLUSTER_ID: 'us-east-1',
    POOLSCOPE_RELAY_NAME: 'from-the-block',
    POOLSCOPE_RELAY_MODEL: 'm',
    POOLSCOPE_POOLS_MODEL: 'm',
  };
  let replica: PoolscopeProcess | undefined;
  afterEach(async () => {
    await replica?.stop();
    replica = undefined;
  });

  it('serve starts with the defaults it would have without them, and warns once naming each', async () => {
    replica = await startPoolscope(['--lease-duration-secs=60'], { env: SHARED_BLOCK });
    expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
    await waitFor(() => replica!.logs.some((line) => line.msg === 'poolscope serving'));
    const warnings = replica.logs.filter((line) => line.msg === 'ignoring environment names serve does not read');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      ignored_env: {
        POOLSCOPE_NAMESPACE: 'an old name: serve reads POOLSCOPE_SERVE_NAMESPACE',
        POOLSCOPE_REGION: 'an old name: serve reads POOLSCOPE_SERVE_REGION',
        POOLSCOPE_RELAY_NAMESPACE: 'read by relay',
        POOLSCOPE_RELAY_REGION: 'read by relay',
        POOLSCOPE_RELAY_CLUSTER_ID: 'read by relay',
        POOLSCOPE_RELAY_NAME: 'read by relay',
        POOLSCOPE_RELAY_MODEL: 'read by relay',
        POOLSCOPE_POOLS_MODEL: 'read by pools',
      },
    });
    // The values are never logged, only the names.
    expect(JSON.stringify(warnings[0])).not.toContain('from-the-block');
    const serving = replica.logs.find((line) => line.msg === 'poolscope serving')!;
    expect(serving).toMatchObject({ pool_discovery: 'registrations', registration_storage: 'memory' });
  });

  it('the relay reads its own names from the block, and ignores serve\'s', async () => {
    const service = await startService({ leaseMs: 60_000 });
    const c = captureCliIo({ ...SHARED_BLOCK, POOLSCOPE_SERVE_LISTEN: '0.0.0.0:1', POOLSCOPE_SERVE_NAMESPACE: 'other', POOLSCOPE_LOG_LEVEL: 'info' });
    const running = main(['relay', `--servers=${service.url}`], c.io);
    try {
      const pool = await waitFor(async () => (await listPools(service.url)).pools.find((p) => p.name === 'from-the-block'));
      expect(pool).toMatchObject({ cluster_id: 'us-east-1', namespace: 'llm', model: 'm', location: { region: 'us-east-1' } });
    } finally {
      c.stop();
      expect(await running).toBe(0);
      await service.stop();
    }
    const warnings = c.lines().filter((line) => line.msg === 'ignoring environment names relay does not read');
    expect(warnings).toHaveLength(1);
    expect(Object.keys(warnings[0]!.ignored_env as object).sort()).toEqual([
      'POOLSCOPE_NAMESPACE',
      'POOLSCOPE_POOLS_MODEL',
      'POOLSCOPE_REGION',
      'POOLSCOPE_SERVE_LISTEN',
      'POOLSCOPE_SERVE_NAMESPACE',
    ]);
  });
});
