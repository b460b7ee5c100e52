// Regions (docs/contract.md §7) as shipped: the kustomize overlays of deploy/regions (one per region, on a
// byte-for-byte copy of deploy/), the example read-only Redis replica, docker-compose.regions.yml and the
// README's by-hand recipe. What they pass to the binary parses with the real parser (the regions file
// included, written where it would be mounted) and is listed by --help; every region of the regions file
// has its overlay and replicas; the names of each region's Redis line up; the overlays render with
// `kubectl kustomize` where installed; and the binary started with an overlay's flags answers its probes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseSimulateFlags } from '../../src/cli/commands/simulate.js';
import { parseServeFlags } from '../../src/cli/flags.js';
import type { ServeConfig } from '../../src/service/config.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { randomPrefix } from '../support/redis-server.js';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';
import { validateK8sObject, type K8sObject } from './k8s-validate.js';
import { flagNames, hasCommand, helpFlags, isRecord, parseYamlDocuments, readYamlDocuments, REPO_ROOT } from './support.js';

const hasKubectl = hasCommand('kubectl');
const hasCompose = hasCommand('docker', ['compose', 'version']);
const REGION_LABEL = 'poolscope.io/region';
const scratch = mkdtempSync(join(tmpdir(), 'poolscope-regions-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * `poolscope serve <args>` parsed by the real parser, with the regions file `content` written to a
 * scratch file in place of the path `--regions-file` names (where a ConfigMap or config would be mounted).
 */
function parseServeWithRegions(args: readonly string[], content: string, env: Record<string, string> = {}): ServeConfig {
  const path = join(scratch, `${randomPrefix('regions')}.yaml`);
  writeFileSync(path, content);
  const local = args.map((arg) => (arg.startsWith('--regions-file=') ? `--regions-file=${path}` : arg));
  expect(local, 'a --regions-file=PATH argument').not.toEqual(args);
  const parsed = parseServeFlags(local, env);
  if (!parsed.ok) throw new Error(`${parsed.flag}: ${parsed.message}`);
  return parsed.config;
}

/** The value of `--name=value` in `args`, or undefined. */
const flagValue = (args: readonly string[], name: string) =>
  args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);

/** The regions of a regions file's text, as the real parser reads them (with `--region` the first one). */
function regionsOf(content: string): ServeConfig['regions'] {
  const [document] = parseYamlDocuments(content, 'regions file');
  const first = isRecord(document) && isRecord(document.regions) ? Object.keys(document.regions)[0] : undefined;
  if (first === undefined) throw new Error('the regions file names no region');
  return parseServeWithRegions([`--region=${first}`, '--regions-file=/mounted/regions.yaml'], content).regions;
}

const hostAndPort = (redisUrl: string) => {
  const url = new URL(redisUrl);
  return { host: url.hostname, port: Number(url.port || 6379) };
};

// ---------------------------------------------------------------------------------------------------
// deploy/regions: the kustomizations as written (offline).

interface Patch {
  patch: string;
  target?: { kind: string; name: string };
}
interface Kustomization {
  kind: string;
  namespace?: string;
  nameSuffix?: string;
  resources: string[];
  patches?: Patch[];
  configMapGenerator?: { name: string; files: string[] }[];
  images?: unknown[];
}
interface Container {
  name: string;
  args?: string[];
  env?: { name: string }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path: string; port: string } };
  livenessProbe?: { httpGet?: { path: string; port: string } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface Workload {
  selector: { matchLabels: Record<string, string> };
  template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[]; volumes?: { name: string; configMap?: { name: string } }[] } };
}
type Service = K8sObject & { spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] } };

const REGIONS_DIR = 'deploy/regions';
const BASE = `${REGIONS_DIR}/base`;
const kustomizationOf = (dir: string) => readYamlDocuments(`${dir}/kustomization.yaml`)[0] as Kustomization;
const base = kustomizationOf(BASE);
/** Region overlays: the folders of deploy/regions with a kustomization, but base. */
const overlayRegions = readdirSync(join(REPO_ROOT, REGIONS_DIR))
  .filter((name) => name !== 'base' && statSync(join(REPO_ROOT, REGIONS_DIR, name)).isDirectory())
  .filter((name) => existsSync(join(REPO_ROOT, REGIONS_DIR, name, 'kustomization.yaml')))
  .sort();
const generator = base.configMapGenerator?.[0];
const regionsFileName = generator?.files[0] ?? '';
const regionsFileText = readFileSync(join(REPO_ROOT, BASE, regionsFileName), 'utf8');
/** The JSON 6902 operations of the patches of a kustomization that target Deployment/poolscope. */
const deploymentOps = (kustomization: Kustomization) =>
  (kustomization.patches ?? [])
    .filter((p) => p.target?.kind === 'Deployment' && p.target.name === 'poolscope')
    .flatMap((p) => parseYamlDocuments(p.patch, 'patch')[0] as { op: string; path: string; value: unknown }[]);
/** The strategic-merge patch of a kustomization that edits Deployment/poolscope. */
const deploymentMergePatch = (kustomization: Kustomization) =>
  (kustomization.patches ?? [])
    .filter((p) => p.target === undefined)
    .map((p) => parseYamlDocuments(p.patch, 'patch')[0] as K8sObject & { spec?: Workload })
    .find((p) => p.kind === 'Deployment' && p.metadata.name === 'poolscope')!;
const ARGS_PATH = '/spec/template/spec/containers/0/args';

/** The poolscope container's args in a region's overlay: base's replacement, then the overlay's additions. */
function overlayArgs(region: string): string[] {
  const replaced = deploymentOps(base).find((op) => op.op === 'replace' && op.path === ARGS_PATH)?.value as string[];
  const added = deploymentOps(kustomizationOf(`${REGIONS_DIR}/${region}`))
    .filter((op) => op.op === 'add' && op.path === `${ARGS_PATH}/-`)
    .map((op) => op.value as string);
  return [...replaced, ...added];
}

const baseDeployment = readYamlDocuments('deploy/deployment.yaml')[0] as K8sObject & { spec: Workload };
const baseContainer = baseDeployment.spec.template.spec.containers[0]!;

describe('deploy/regions: the overlays as written', () => {
  it('has an overlay for every region of the regions file, and a region of the file for every overlay', () => {
    expect(generator, 'base: a configMapGenerator for the regions file').toMatchObject({ name: 'poolscope-regions', files: [regionsFileName] });
    expect(overlayRegions.length).toBeGreaterThanOrEqual(2);
    expect(regionsOf(regionsFileText).map((r) => r.name)).toEqual(overlayRegions);
  });

  it('base copies deploy/ byte for byte (kustomize refuses a base that contains its overlay) and keeps its patches and image', () => {
    const deploy = kustomizationOf('deploy');
    expect(base.namespace).toBe(deploy.namespace);
    expect(base.resources).toEqual(deploy.resources);
    for (const file of base.resources) {
      expect(readFileSync(join(REPO_ROOT, BASE, file), 'utf8'), `${BASE}/${file} is a copy of deploy/${file}`).toBe(readFileSync(join(REPO_ROOT, 'deploy', file), 'utf8'));
    }
    for (const patch of deploy.patches ?? []) expect(base.patches).toContainEqual(patch);
    expect(base.images).toEqual(deploy.images);
  });

  it("base takes storage from the mounted regions file: deploy/'s args without storage flags, no Redis env, the ConfigMap mounted read-only", () => {
    const args = overlayArgs(overlayRegions[0]!).filter((arg) => !arg.startsWith('--region='));
    const regionsFile = flagValue(args, 'regions-file')!;
    const storageFlags = /^--(registration-storage|redis-)/;
    expect(args).toEqual([...baseContainer.args!.filter((arg) => !storageFlags.test(arg)), `--regions-file=${regionsFile}`]);
    const merge = deploymentMergePatch(base);
    const container = merge.spec!.template.spec.containers.find((c) => c.name === baseContainer.name)!;
    const removed = (container.env as ({ name: string; $patch?: string })[]).filter((e) => e.$patch === 'delete').map((e) => e.name);
    expect(removed.sort()).toEqual(baseContainer.env!.map((e) => e.name).filter((name) => /^POOLSCOPE_SERVE_REDIS_/.test(name)).sort());
    const mount = container.volumeMounts!.find((m) => m.mountPath === dirname(regionsFile))!;
    expect(mount).toMatchObject({ readOnly: true });
    expect(basename(regionsFile)).toBe(regionsFileName);
    expect(merge.spec!.template.spec.volumes).toContainEqual({ name: mount.name, configMap: { name: generator!.name } });
  });

  it.each(overlayRegions)('%s: deploy/regions/base with --region=%s, and the region label kept off the selectors', (region) => {
    const overlay = kustomizationOf(`${REGIONS_DIR}/${region}`);
    expect(overlay.resources).toEqual(['../base']);
    expect(overlay.namespace).toBe(base.namespace);
    const args = overlayArgs(region);
    expect(flagValue(args, 'region')).toBe(region);
    expect(args.filter((arg) => arg.startsWith('--region='))).toHaveLength(1);
    expect((overlay as unknown as { labels: unknown[] }).labels).toContainEqual({ pairs: { [REGION_LABEL]: region }, includeSelectors: false, includeTemplates: true });
  });

  it.each(overlayRegions)('%s: serve flags the real parser accepts, with the regions file where it is mounted; --help lists each', async (region) => {
    const args = overlayArgs(region);
    expect(args[0]).toBe('serve');
    const config = parseServeWithRegions(args.slice(1), regionsFileText);
    expect(config).toMatchObject({ region, registrationStorage: 'redis', redisUrl: undefined });
    expect(config.regions.map((r) => r.name)).toEqual(overlayRegions);
    const listed = await helpFlags('serve');
    for (const flag of flagNames(args)) expect(listed.has(flag), `--${flag}`).toBe(true);
  });

  it.each(overlayRegions)("%s/redis: the quick-start Redis, as the Service the regions file names for %s, without deploy/redis's Secret", (region) => {
    const redis = kustomizationOf(`${REGIONS_DIR}/${region}/redis`);
    expect(redis.resources).toEqual(['../../../redis']);
    expect(redis.namespace).toBe(base.namespace);
    const service = readYamlDocuments('deploy/redis/redis.yaml').find((o) => (o as K8sObject).kind === 'Service') as Service;
    const { host, port } = hostAndPort(regionsOf(regionsFileText).find((r) => r.name === region)!.redisUrl);
    expect(host).toBe(`${service.metadata.name}${redis.nameSuffix}`);
    expect(port).toBe(service.spec.ports[0]!.port);
    expect(redis.patches?.map((p) => parseYamlDocuments(p.patch, 'patch')[0])).toContainEqual(expect.objectContaining({ $patch: 'delete', kind: 'Secret' }));
  });

  describe('redis-replica.yaml: a read-only replica of a remote region, under the name the regions file gives it', () => {
    const objects = readYamlDocuments(`${REGIONS_DIR}/redis-replica.yaml`) as K8sObject[];
    const deployment = objects.find((o) => o.kind === 'Deployment') as K8sObject & { spec: Workload };
    const service = objects.find((o) => o.kind === 'Service') as Service;
    const redis = deployment.spec.template.spec.containers[0]!;
    const args = redis.args!;
    const option = (name: string) => args[args.indexOf(`--${name}`) + 1];

    it('is valid, in the namespace poolscope runs in', () => {
      for (const object of objects) expect(validateK8sObject(object)).toEqual([]);
      for (const object of objects) expect(object.metadata.namespace).toBe(base.namespace);
    });

    it('serves the host and port of a region of the regions file, and selects only the replica', () => {
      const region = regionsOf(regionsFileText).find((r) => hostAndPort(r.redisUrl).host === service.metadata.name);
      expect(region, `a region whose redis_url names ${service.metadata.name}`).toBeDefined();
      expect(service.spec.ports[0]!.port).toBe(hostAndPort(region!.redisUrl).port);
      const labels = deployment.spec.template.metadata.labels;
      expect(labels[REGION_LABEL]).toBe(region!.name);
      expect(Object.entries(service.spec.selector).every(([k, v]) => labels[k] === v)).toBe(true);
      expect(redis.ports!.map((p) => p.name)).toContain(service.spec.ports[0]!.targetPort);
      // Not the quick-start primary of the same region, should both run in one namespace.
      const primary = readYamlDocuments('deploy/redis/redis.yaml').find((o) => (o as K8sObject).kind === 'Deployment') as K8sObject & { spec: Workload };
      const primaryLabels: Record<string, string> = { ...primary.spec.template.metadata.labels, [REGION_LABEL]: region!.name };
      expect(Object.entries(service.spec.selector).every(([k, v]) => primaryLabels[k] === v)).toBe(false);
    });

    it('replicates read-only and refuses reads while cut off from the primary', () => {
      expect(args.indexOf('--replicaof')).toBeGreaterThanOrEqual(0);
      expect(option('replicaof')).toMatch(/^[a-z0-9.-]+$/);
      expect(Number(args[args.indexOf('--replicaof') + 2])).toBeGreaterThan(0);
      expect(option('replica-read-only')).toBe('yes');
      expect(option('replica-serve-stale-data')).toBe('no');
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// deploy/regions rendered by kubectl kustomize.

describe.skipIf(!hasKubectl)('deploy/regions built with kubectl kustomize', () => {
  const build = (dir: string) => parseYamlDocuments(execFileSync('kubectl', ['kustomize', join(REPO_ROOT, dir)], { encoding: 'utf8' }), dir) as K8sObject[];
  const id = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
  const withoutRegionLabel = (o: K8sObject): K8sObject => {
    const copy = structuredClone(o);
    delete copy.metadata.labels?.[REGION_LABEL];
    if (copy.metadata.labels && Object.keys(copy.metadata.labels).length === 0) delete copy.metadata.labels;
    return copy;
  };
  const deploy = build('deploy');
  const rendered = new Map(overlayRegions.map((region) => [region, build(`${REGIONS_DIR}/${region}`)]));

  it.each(overlayRegions)("%s: every object valid, in namespace poolscope; deploy/'s objects and the regions ConfigMap", (region) => {
    const objects = rendered.get(region)!;
    for (const object of objects) expect(validateK8sObject(object), id(object)).toEqual([]);
    for (const object of objects) {
      if (!object.kind.startsWith('Cluster') && object.kind !== 'Namespace') expect(object.metadata.namespace, id(object)).toBe('poolscope');
    }
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
    expect(configMap.metadata.name).toMatch(/^poolscope-regions-[a-z0-9]+$/);
    expect(objects.map(id).sort()).toEqual([...deploy.map(id), id(configMap)].sort());
    // Everything but the Deployment is deploy/'s, labelled with the region.
    for (const object of objects.filter((o) => o.kind !== 'Deployment' && o.kind !== 'ConfigMap')) {
      expect(object.metadata.labels?.[REGION_LABEL], id(object)).toBe(region);
      expect(withoutRegionLabel(object)).toEqual(deploy.find((o) => id(o) === id(object)));
    }
  });

  it.each(overlayRegions)('%s: the Deployment runs the overlay args, mounts the ConfigMap at --regions-file, keeps its selector', (region) => {
    const objects = rendered.get(region)!;
    const deployment = objects.find((o) => o.kind === 'Deployment') as K8sObject & { spec: Workload };
    const container = deployment.spec.template.spec.containers[0]!;
    expect(container.args).toEqual(overlayArgs(region));
    expect(container.env?.map((e) => e.name).filter((name) => name.startsWith('POOLSCOPE_SERVE_REDIS_') || name.startsWith('POOLSCOPE_REDIS_'))).toEqual([]);
    expect(deployment.spec.selector).toEqual(baseDeployment.spec.selector);
    expect(deployment.spec.template.metadata.labels[REGION_LABEL]).toBe(region);

    const regionsFile = flagValue(container.args!, 'regions-file')!;
    const mount = container.volumeMounts!.find((m) => m.mountPath === dirname(regionsFile))!;
    const volume = deployment.spec.template.spec.volumes!.find((v) => v.name === mount.name)!;
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === volume.configMap?.name) as K8sObject & { data: Record<string, string> };
    expect(Object.keys(configMap.data)).toEqual([basename(regionsFile)]);
    const config = parseServeWithRegions(container.args!.slice(1), configMap.data[basename(regionsFile)]!);
    expect(config.region).toBe(region);
    expect(config.regions.map((r) => r.name)).toEqual(overlayRegions);
  });

  it('every region gets the same regions ConfigMap (one file everywhere)', () => {
    const configMaps = [...rendered.values()].map((objects) => {
      const { metadata, data } = objects.find((o) => o.kind === 'ConfigMap') as K8sObject & { data: unknown };
      return { name: metadata.name, data };
    });
    for (const configMap of configMaps) expect(configMap).toEqual(configMaps[0]);
  });

  it.each(overlayRegions)('%s/redis: the Service the regions file names selects the Redis pods; no Secret', (region) => {
    const objects = build(`${REGIONS_DIR}/${region}/redis`);
    for (const object of objects) expect(validateK8sObject(object), id(object)).toEqual([]);
    expect(objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'Namespace', 'Service']);
    const { host, port } = hostAndPort(regionsOf(regionsFileText).find((r) => r.name === region)!.redisUrl);
    const service = objects.find((o) => o.kind === 'Service') as Service;
    const deployment = objects.find((o) => o.kind === 'Deployment') as K8sObject & { spec: Workload };
    expect(service.metadata).toMatchObject({ name: host, namespace: 'poolscope' });
    expect(service.spec.ports[0]!.port).toBe(port);
    const labels = deployment.spec.template.metadata.labels;
    expect(service.spec.selector[REGION_LABEL]).toBe(region);
    expect(Object.entries(service.spec.selector).every(([k, v]) => labels[k] === v)).toBe(true);
    expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector);
  });
});

// ---------------------------------------------------------------------------------------------------
// The binary with an overlay's flags: a replica of the first region; each region on a key prefix of its
// own in the test's Redis (a store is a redis_url and a prefix).

describe("the binary started with an overlay's flags", () => {
  const region = overlayRegions[0]!;
  const redis = useRedis('regions');
  let replica: PoolscopeProcess;

  beforeAll(async () => {
    const buildError = inject('buildError');
    if (buildError !== null) throw new Error(buildError);
    // The regions of the shipped file, each on this test's Redis under a prefix of its own.
    const regions = Object.fromEntries(overlayRegions.map((name) => [name, { redis_url: redis.url, prefix: randomPrefix(name) }]));
    const path = join(scratch, 'binary-regions.json');
    writeFileSync(path, JSON.stringify({ regions }));
    const args = overlayArgs(region)
      .slice(1)
      .filter((arg) => !arg.startsWith('--listen'))
      .map((arg) => (arg.startsWith('--regions-file=') ? `--regions-file=${path}` : arg));
    replica = await startPoolscope(args);
  });
  afterAll(() => replica?.stop());

  it('answers its probes with 200 and lists every region, complete', async () => {
    await waitFor(async () => (await fetch(`${replica.url}${baseContainer.readinessProbe!.httpGet!.path}`)).status === 200, { timeoutMs: 10_000, message: 'readiness' });
    expect((await fetch(`${replica.url}${baseContainer.livenessProbe!.httpGet!.path}`)).status).toBe(200);
    // Liveness depends on no store: a region's Redis outage never restarts its replicas (docs/operations.md "Probes").
    expect(baseContainer.livenessProbe!.httpGet!.path).toBe('/livez');
    expect(baseContainer.readinessProbe!.httpGet!.path).toBe('/readyz');
    const body = (await (await fetch(`${replica.url}/pools`)).json()) as { complete: boolean; regions: { name: string; complete: boolean }[] };
    expect(body.regions.map((r) => r.name).sort()).toEqual(overlayRegions);
    await waitFor(async () => ((await (await fetch(`${replica.url}/pools`)).json()) as { complete: boolean }).complete, { timeoutMs: 10_000, message: 'complete' });
  });
});

// ---------------------------------------------------------------------------------------------------
// docker-compose.regions.yml

interface ComposeService {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  configs?: { source: string; target: string }[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
}

const COMPOSE_FILE = 'docker-compose.regions.yml';
const [compose] = readYamlDocuments(COMPOSE_FILE) as { configs: Record<string, { content?: string }>; services: Record<string, ComposeService> }[];
const services = compose!.services;
const composeReplicas = Object.entries(services).filter(([, s]) => s.command?.[0] === 'serve');
const simulates = Object.entries(services).filter(([, s]) => s.command?.[0] === 'simulate');
const regionOf = (service: ComposeService) => flagValue(service.command!, 'region')!;
const composeRegionsText = compose!.configs.regions?.content ?? '';
const composeRegions = regionsOf(composeRegionsText);

describe(COMPOSE_FILE, () => {
  it('has two Redis, two replicas and a simulate per region, all poolscope services on the image built here', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['poolscope-eu-1', 'poolscope-eu-2', 'poolscope-us-1', 'poolscope-us-2', 'redis-eu', 'redis-us', 'simulate-eu', 'simulate-us'].sort(),
    );
    // One service builds the image; every poolscope service runs it.
    const poolscope = [...composeReplicas, ...simulates];
    expect(poolscope.filter(([, service]) => service.build !== undefined).map(([name, service]) => [name, service.build])).toEqual([['poolscope-us-1', '.']]);
    for (const [, service] of poolscope) expect(service.image).toBe('poolscope:0.1.0');
    expect(services['redis-us']!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(services['redis-eu']!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    // Each replica's healthcheck is the image's (liveness: /livez, which a store outage never fails), which
    // follows serve's address given as its environment name.
    for (const [name, service] of composeReplicas) {
      expect(service.healthcheck, name).toBeUndefined();
      expect(service.environment?.POOLSCOPE_SERVE_LISTEN, name).toBe('0.0.0.0:8080');
    }
  });

  it('the regions file (configs.regions) names both regions, each on a Redis service of the file', () => {
    expect(composeRegions.map((r) => r.name)).toEqual(['eu-west-1', 'us-east-1']);
    for (const region of composeRegions) {
      const { host } = hostAndPort(region.redisUrl);
      expect(services[host]?.healthcheck?.test, `${region.name}: service ${host}`).toEqual(['CMD', 'redis-cli', 'ping']);
    }
    expect(new Set(composeRegions.map((r) => hostAndPort(r.redisUrl).host)).size).toBe(composeRegions.length);
    for (const region of composeRegions) {
      expect(composeReplicas.filter(([, s]) => regionOf(s) === region.name).length, region.name).toBeGreaterThanOrEqual(2);
    }
  });

  it.each(composeReplicas.map(([name]) => name))('%s: --region and --regions-file (the mounted regions config) parse; it waits for its own Redis', async (name) => {
    const service = services[name]!;
    const args = service.command!.slice(1);
    const regionsFile = flagValue(args, 'regions-file');
    expect(service.configs).toContainEqual({ source: 'regions', target: regionsFile });
    const config = parseServeWithRegions(args, composeRegionsText, service.environment ?? {});
    expect(config).toMatchObject({ region: regionOf(service), registrationStorage: 'redis' });
    const home = hostAndPort(composeRegions.find((r) => r.name === config.region)!.redisUrl).host;
    expect(service.depends_on).toEqual({ [home]: { condition: 'service_healthy' } });
    const [host, published, container] = service.ports![0]!.split(':');
    expect(host).toBe('127.0.0.1');
    expect(Number(published)).toBeGreaterThan(0);
    expect(Number(container)).toBe(config.listen.port);
    const listed = await helpFlags('serve');
    for (const flag of flagNames(service.command!)) expect(listed.has(flag), `--${flag}`).toBe(true);
  });

  it('publishes each replica on its own port', () => {
    const published = composeReplicas.map(([, s]) => s.ports![0]!.split(':')[1]);
    expect(new Set(published).size).toBe(composeReplicas.length);
  });

  it('one simulate per region: --servers its own replicas, --fallback-servers the other region’s', async () => {
    const urlOf = ([name, service]: [string, ComposeService]) => {
      const config = parseServeWithRegions(service.command!.slice(1), composeRegionsText, service.environment ?? {});
      return `http://${name}:${config.listen.port}`;
    };
    expect(simulates.length).toBe(composeRegions.length);
    const covered = new Set<string>();
    const listed = await helpFlags('simulate');
    for (const [name, simulate] of simulates) {
      const parsed = parseSimulateFlags(simulate.command!.slice(1), {});
      if (!parsed.ok) throw new Error(`${name}: ${parsed.flag}: ${parsed.message}`);
      const draft = { ...parsed.config, fallbackServers: parsed.config.fallbackServers ?? [] };
      const homeRegion = regionOf(composeReplicas.find(([replica]) => draft.servers.some((url) => new URL(url).hostname === replica))![1]);
      covered.add(homeRegion);
      const own = composeReplicas.filter(([, s]) => regionOf(s) === homeRegion);
      const others = composeReplicas.filter(([, s]) => regionOf(s) !== homeRegion);
      expect([...draft.servers].sort(), name).toEqual(own.map(urlOf).sort());
      expect([...draft.fallbackServers].sort(), name).toEqual(others.map(urlOf).sort());
      expect(draft.pools).toBeGreaterThan(0);
      for (const [replica] of own) expect(simulate.depends_on?.[replica]).toEqual({ condition: 'service_healthy' });
      // The image's HEALTHCHECK passes in a simulate container (test/container/image.test.ts).
      expect(simulate.healthcheck).toBeUndefined();
      for (const flag of flagNames(simulate.command!)) expect(listed.has(flag), `--${flag}`).toBe(true);
    }
    expect([...covered].sort()).toEqual(composeRegions.map((r) => r.name));
  });

  it.skipIf(!hasCompose)('docker compose config accepts it', () => {
    execFileSync('docker', ['compose', '-f', join(REPO_ROOT, COMPOSE_FILE), 'config', '--quiet'], { stdio: 'pipe' });
  });
});

// ---------------------------------------------------------------------------------------------------
// README.md, "Regions": where it sits, and its by-hand recipe's regions file.

describe('README.md, "## Regions"', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  const start = readme.indexOf('\n## Regions\n');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));

  it('follows "Many replicas on one Redis"', () => {
    expect(headings.indexOf('Regions')).toBe(headings.indexOf('Many replicas on one Redis') + 1);
  });

  it("the recipe's regions file parses and puts each region on its own local Redis, which the recipe starts", () => {
    const heredoc = /cat > regions\.yaml <<'YAML'\n([\s\S]*?)\nYAML\n/.exec(section);
    expect(heredoc, 'a regions.yaml heredoc').not.toBeNull();
    const regions = regionsOf(heredoc![1]!);
    expect(regions.map((r) => r.name)).toEqual(['r1', 'r2', 'r3']);
    for (const region of regions) {
      const { host, port } = hostAndPort(region.redisUrl);
      expect(host).toBe('127.0.0.1');
      expect(section).toContain(`--port ${port}`);
    }
  });

  it('the recipe uses loopback addresses only', () => {
    const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).join('\n');
    for (const address of blocks.match(/\b\d{1,3}(?:\.\d{1,3}){3}\b/g) ?? []) expect(address).toBe('127.0.0.1');
    expect(blocks).not.toMatch(/localhost|0\.0\.0\.0/);
  });
});
