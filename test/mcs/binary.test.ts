// The real `poolscope serve` binary in `--pool-discovery mcs` and `karmada`, with KUBECONFIG pointing at a
// fake Kubernetes API (the recorded fixtures: a list, then its watch lines) and the Redis store; and the
// suffix check, which refuses clashing suffixes before any Kubernetes client starts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { fixtureLines, fixtureText } from '../kube/helpers.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { listPools, postJson } from '../support/http.js';
import { freePort, runPoolscope, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { randomPrefix } from '../support/redis-server.js';
import { useRedis } from '../support/use-redis.js';
import { eventually, waitFor } from '../support/wait.js';
import { registrationFor, type PoolRef } from './support/mcs-service.js';

const dir = mkdtempSync(join(tmpdir(), 'poolscope-mcs-'));
const redis = useRedis('e2e');
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A kubeconfig for the fake API server, as an operator would write one (plain http needs skip-verify). */
function kubeconfigFor(fake: FakeKubeApi): string {
  const path = join(dir, `kubeconfig-${randomPrefix('k')}.yaml`);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '  - name: fake',
      '    cluster:',
      `      server: ${fake.url}`,
      '      insecure-skip-tls-verify: true',
      'users:',
      '  - name: fake',
      '    user:',
      '      token: not-checked',
      'contexts:',
      '  - name: fake',
      '    context: { cluster: fake, user: fake }',
      'current-context: fake',
      '',
    ].join('\n'),
  );
  return path;
}

async function startFake(): Promise<FakeKubeApi> {
  const fake = await FakeKubeApi.start();
  cleanups.push(() => fake.close());
  return fake;
}

const runRefused = (args: string[], env: Record<string, string>) => runPoolscope(['serve', ...args], { env });

describe('suffix validation', () => {
  it.each([
    { clash: 'equal suffixes (mcs)', args: ['--pool-discovery=mcs', '--relay-service-suffix=-svc', '--frontend-service-suffix=-svc'], rule: /must differ/ },
    { clash: 'the frontend suffix ends the relay one (karmada)', args: ['--pool-discovery=karmada', '--frontend-service-suffix=-relay'], rule: /must not be the end of --relay-service-suffix/ },
    { clash: 'the relay suffix ends the frontend one (mcs)', args: ['--pool-discovery=mcs', '--relay-service-suffix=-relay', '--frontend-service-suffix=-pool-relay'], rule: /must not end with/ },
    { clash: 'equal suffixes from the environment (karmada)', args: ['--pool-discovery=karmada'], env: { POOLSCOPE_SERVE_FRONTEND_SERVICE_SUFFIX: '-pool-relay' }, rule: /must differ/ },
  ])('$clash: exit 2 naming --frontend-service-suffix, before any Kubernetes request', async ({ args, env, rule }) => {
    const fake = await startFake();
    const result = await runRefused([...args, `--listen=127.0.0.1:${await freePort()}`], { KUBECONFIG: kubeconfigFor(fake), ...env });
    expect(result.code).toBe(2);
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^poolscope: --frontend-service-suffix: /);
    expect(lines[0]).toMatch(rule);
    // The process has exited: the fake API server never heard from it.
    expect(fake.requests).toEqual([]);
  });
});

interface Flavour {
  mode: 'mcs' | 'karmada';
  /** This flavour's cluster names in the fixtures, and the addresses they give. */
  cluster: string;
  secondCluster: string;
  llamaRelay: string;
  llamaFrontend: string;
  secondRelay: string;
  phiRelay: string;
  args: string[];
  watchPath: string;
  listResourceVersion: string;
}

const FLAVOURS: Flavour[] = [
  {
    mode: 'karmada',
    cluster: 'member-us-east-1',
    secondCluster: 'member-eu-west-2',
    llamaRelay: 'http://10.20.3.41:9000',
    llamaFrontend: 'http://10.20.5.17:8000',
    secondRelay: 'http://10.40.2.19:9000',
    phiRelay: 'http://10.20.4.57:9000',
    // The namespaced Role of deploy/rbac.yaml is enough.
    args: ['--namespace=dynamo'],
    watchPath: '/apis/discovery.k8s.io/v1/namespaces/dynamo/endpointslices',
    listResourceVersion: '3141592',
  },
  {
    mode: 'mcs',
    cluster: 'gpu-east-1',
    secondCluster: 'gpu-west-2',
    llamaRelay: 'http://10.12.3.41:9000',
    llamaFrontend: 'http://10.12.5.17:8000',
    secondRelay: 'http://10.40.2.19:9000',
    phiRelay: 'http://10.12.4.57:9000',
    args: [],
    watchPath: '/apis/discovery.k8s.io/v1/endpointslices',
    listResourceVersion: '48213377',
  },
];

describe.each(FLAVOURS)('poolscope serve --pool-discovery $mode (the binary, Redis store)', (flavour) => {
  it('joins the recorded slices with the leases, follows the watch, and warns as the contract says', async () => {
    const fake = await startFake();
    fake.loadList(fixtureText(`${flavour.mode}/list.json`));
    const svc: PoolscopeProcess = await startPoolscope(
      [
        `--pool-discovery=${flavour.mode}`,
        '--registration-storage=redis',
        `--redis-url=${redis.url}`,
        `--redis-prefix=${redis.prefix}`,
        '--lease-duration-secs=30',
        '--heartbeat-interval-secs=10',
        ...flavour.args,
      ],
      { env: { KUBECONFIG: kubeconfigFor(fake) } },
    );
    cleanups.push(() => svc.stop('SIGKILL'));
    const getPools = (): Promise<PoolList> => listPools(svc.url);
    const ref = (pool: string, cluster = flavour.cluster): PoolRef => ({ cluster, namespace: 'dynamo', pool });
    const registered = [ref('llama-70b'), ref('llama-70b', flavour.secondCluster), ref('gemma-27b'), ref('mistral-7b'), ref('phi-4')];
    for (const pool of registered) {
      expect((await postJson(svc.url, registrationFor(pool))).status).toBe(200);
    }

    const byKey = <T extends { cluster_id: string; name: string }>(pools: T[]) =>
      [...pools].sort((a, b) => `${a.cluster_id}/${a.name}`.localeCompare(`${b.cluster_id}/${b.name}`));
    await eventually(async () =>
      expect(await getPools()).toMatchObject({
        complete: true,
        pools: byKey([
          // Another cluster's PoolRelay, without frontends there: listed, frontendless.
          { cluster_id: flavour.secondCluster, name: 'llama-70b', state: 'frontendless', relays: [flavour.secondRelay], frontends: [] },
          // Dual-stack frontend: once, at IPv4. Model and the rest from the lease.
          {
            cluster_id: flavour.cluster,
            name: 'llama-70b',
            state: 'live',
            model: 'org/llama-70b',
            relays: [flavour.llamaRelay],
            frontends: [flavour.llamaFrontend],
          },
        ]),
      }),
    );
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    expect(fake.listRequests()[0]?.path).toBe(flavour.watchPath);
    expect(fake.watchRequests()[0]).toMatchObject({
      path: flavour.watchPath,
      query: { watch: 'true', allowWatchBookmarks: 'true', resourceVersion: flavour.listResourceVersion },
    });
    const states = async () =>
      Object.fromEntries(
        ((await (await fetch(`${svc.url}/debug/pools`)).json()) as { pools: Array<{ pool: string; state: string }> }).pools.map(
          (p) => [p.pool, p.state],
        ),
      );
    const qwenCluster = flavour.mode === 'mcs' ? 'gpu-v6-1' : 'member-ipv6-1';
    expect(await states()).toMatchObject({
      [`${flavour.cluster}/dynamo/gemma-27b`]: 'one-sided', // its relay endpoint is not Ready
      [`${flavour.cluster}/dynamo/mistral-7b`]: 'one-sided',
      [`${flavour.cluster}/dynamo/phi-4`]: 'one-sided',
      [`${qwenCluster}/dynamo/qwen3-32b`]: 'absent', // frontend only
    });
    // Broker copies, native slices and Services that match neither suffix name no pool.
    const keys = Object.keys(await states());
    expect(keys.filter((key) => key.includes('global-router') || key.includes('submariner-k8s-broker'))).toEqual([]);
    expect(keys.every((key) => key.split('/')[1] === 'dynamo')).toBe(true);

    // The recorded watch: phi-4's relay appears, llama's relay goes unready, mistral's frontend is deleted.
    for (const line of fixtureLines(`${flavour.mode}/watch.jsonl`)) fake.replayWatchLine(line);
    await eventually(async () =>
      expect((await getPools()).pools).toMatchObject(
        byKey([
          { cluster_id: flavour.secondCluster, name: 'llama-70b', state: 'frontendless', relays: [flavour.secondRelay], frontends: [] },
          { cluster_id: flavour.cluster, name: 'phi-4', state: 'frontendless', relays: [flavour.phiRelay], frontends: [] },
        ]),
      ),
    );
    expect(await states()).toMatchObject({ [`${flavour.cluster}/dynamo/llama-70b`]: 'one-sided' });

    // The warnings, each once, with the contract's fields.
    const warnings = () => svc.logs.filter((line) => line.level === 40);
    await waitFor(() => warnings().some((w) => w.pool === `${flavour.cluster}/dynamo/phi-4`), { message: 'the phi-4 warning' });
    expect(warnings().filter((w) => w.pool === `${flavour.cluster}/dynamo/phi-4`)).toEqual([
      expect.objectContaining({
        frontend_service: 'phi-4-frontend',
        port_name: 'http',
        frontend_slices_with_port: false,
      }),
    ]);
    expect(warnings().filter((w) => w.pool === `${flavour.secondCluster}/dynamo/llama-70b`)).toHaveLength(1);
    // mistral's slice carries only `grpc` and `metrics`: one warning for the slice, until it was deleted.
    expect(warnings().filter((w) => w.pool === `${flavour.cluster}/dynamo/mistral-7b`)).toEqual([
      expect.objectContaining({ port_name: 'http', slice: expect.stringContaining('mistral-7b-frontend') }),
    ]);
    expect(await svc.stop('SIGTERM')).toBe(0);
  });
});
