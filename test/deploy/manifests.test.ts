// deploy/: every manifest is a valid Kubernetes object (schema and no unknown field, offline), the
// kustomizations build (with kubectl where it is installed), and what the manifests pass to the binary
// holds: the serve flags parse with the real parser and are listed by `poolscope serve --help`, the
// probes and ports point at what the binary serves (it is started with those flags and asked), and the
// labels, selectors, ServiceAccount and Secret line up. The PoolRelay example's registration passes the
// contract.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseRelayFlags } from '../../src/cli/commands/relay-flags.js';
import { relayCommand } from '../../src/cli/commands/relay.js';
import { serveCommand } from '../../src/cli/commands/serve.js';
import { flagOfEnvName } from '../../src/cli/env-names.js';
import { SERVE_FLAGS } from '../../src/cli/flag-table.js';
import { parseServeFlags } from '../../src/cli/flags.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';
import { validateK8sObject, type K8sObject } from './k8s-validate.js';
import { flagNames, hasCommand, helpFlags, parseYamlDocuments, readYamlDocuments, REPO_ROOT } from './support.js';

const DEPLOY = join(REPO_ROOT, 'deploy');
const hasKubectl = hasCommand('kubectl');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return name.endsWith('.yaml') || name.endsWith('.yml') ? [relative(REPO_ROOT, path)] : [];
  });
}

// deploy/prometheus holds Prometheus rule files and deploy/monitoring a kustomize Component of
// prometheus-operator objects: test/monitoring checks both.
const NOT_HERE = ['deploy/prometheus/', 'deploy/monitoring/'];
const FILES = yamlFiles(DEPLOY).filter((file) => !NOT_HERE.some((dir) => file.startsWith(dir)));
// deploy/networkpolicy is a kustomize Component: test/deploy/networkpolicy.test.ts checks it.
const kustomizations = FILES.filter((f) => f.endsWith('kustomization.yaml') && !f.startsWith('deploy/networkpolicy/'));
const objectsOf = (file: string) => readYamlDocuments(file) as K8sObject[];
const find = (file: string, kind: string, name?: string) => {
  const found = objectsOf(file).find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`${file}: no ${kind} ${name ?? ''}`);
  return found;
};

// The shapes the checks read, narrowed from the parsed YAML.
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
interface PodSpec {
  serviceAccountName?: string;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  volumes?: { name: string; configMap?: { name: string } }[];
}
const deploymentParts = (d: K8sObject) => {
  const spec = d.spec as { replicas: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
  return { replicas: spec.replicas, selector: spec.selector.matchLabels, labels: spec.template.metadata.labels, pod: spec.template.spec };
};
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** A container's env as plain values: literals, Secrets read from `secrets`, fieldRefs from `fields`. */
function envOf(container: Container, secrets: Map<string, Record<string, string>>, fields: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const item of container.env ?? []) {
    if (item.value !== undefined) env[item.name] = item.value;
    const secret = item.valueFrom?.secretKeyRef;
    if (secret) {
      const value = secrets.get(secret.name)?.[secret.key];
      if (value === undefined) throw new Error(`env ${item.name}: no Secret ${secret.name} key ${secret.key} in deploy/`);
      env[item.name] = value;
    }
    const field = item.valueFrom?.fieldRef?.fieldPath;
    if (field) env[item.name] = fields[field] ?? '';
  }
  return env;
}

describe('deploy/ manifests', () => {
  it('finds the manifests and the RBAC file they build on', () => {
    expect(FILES).toEqual(expect.arrayContaining(['deploy/kustomization.yaml', 'deploy/deployment.yaml', 'deploy/rbac.yaml', 'deploy/examples/pool-relay-sidecar.yaml']));
  });

  it.each(FILES.filter((f) => !f.endsWith('kustomization.yaml')))('%s: every object is valid (schema, no unknown field)', (file) => {
    const objects = readYamlDocuments(file);
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) expect(validateK8sObject(object), `${file} ${JSON.stringify((object as K8sObject).metadata)}`).toEqual([]);
  });

  it.each(kustomizations)('%s: names only files and folders that exist', (file) => {
    const [kustomization] = readYamlDocuments(file) as { kind: string; resources: string[] }[];
    expect(kustomization!.kind).toBe('Kustomization');
    for (const resource of kustomization!.resources) expect(existsSync(join(REPO_ROOT, file, '..', resource)), resource).toBe(true);
  });

  describe.skipIf(!hasKubectl)('built with kubectl kustomize', () => {
    const build = (dir: string) => parseYamlDocuments(execFileSync('kubectl', ['kustomize', join(REPO_ROOT, dir)], { encoding: 'utf8' }), dir) as K8sObject[];

    it('deploy/: the service, all in namespace poolscope, with the all-namespaces RBAC only', () => {
      const objects = build('deploy');
      for (const object of objects) expect(validateK8sObject(object)).toEqual([]);
      expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
        'ClusterRole/poolscope-endpointslice-reader',
        'ClusterRoleBinding/poolscope-endpointslice-reader',
        'Deployment/poolscope',
        'Namespace/poolscope',
        'PodDisruptionBudget/poolscope',
        'Service/poolscope',
        'ServiceAccount/poolscope',
      ]);
      for (const object of objects) {
        if (!object.kind.startsWith('Cluster') && object.kind !== 'Namespace') expect(object.metadata.namespace, object.kind).toBe('poolscope');
      }
      const deployment = objects.find((o) => o.kind === 'Deployment')!;
      expect(deploymentParts(deployment).pod.containers[0]!.image).toBe('poolscope:0.1.0');
    });

    it('deploy/redis: the quick-start Redis and the Secret naming it, in namespace poolscope', () => {
      const objects = build('deploy/redis');
      for (const object of objects) expect(validateK8sObject(object)).toEqual([]);
      expect(objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'Namespace', 'Secret', 'Service']);
      for (const object of objects.filter((o) => o.kind !== 'Namespace')) expect(object.metadata.namespace).toBe('poolscope');
    });
  });

  describe('the poolscope Deployment', () => {
    const deployment = find('deploy/deployment.yaml', 'Deployment', 'poolscope');
    const { replicas, selector, labels, pod } = deploymentParts(deployment);
    const container = pod.containers[0]!;
    const secret = find('deploy/redis/secret.yaml', 'Secret', 'poolscope-redis') as K8sObject & { stringData: Record<string, string> };
    const env = envOf(container, new Map([[secret.metadata.name, secret.stringData]]), {});
    const args = container.args ?? [];

    it('runs at least two replicas, selected by its own labels, as a non-root user', () => {
      expect(replicas).toBeGreaterThanOrEqual(2);
      expect(matches(selector, labels)).toBe(true);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    });

    it('passes serve flags the real parser accepts, and `poolscope serve --help` lists each', async () => {
      expect(args[0]).toBe('serve');
      const parsed = parseServeFlags(args.slice(1), env);
      expect(parsed).toMatchObject({ ok: true, config: { registrationStorage: 'redis', redisUrl: secret.stringData.url } });
      const listed = await helpFlags('serve');
      // Every environment name it sets is one serve reads, no other command's or an old one.
      const fromEnv = Object.keys(env).map((n) => {
        const flag = flagOfEnvName(serveCommand, n);
        expect(flag, `${n} is a name serve reads`).toBeDefined();
        return flag!;
      });
      for (const name of [...flagNames(args), ...fromEnv]) {
        expect(listed.has(name), `--${name}`).toBe(true);
        expect(SERVE_FLAGS.some((f) => f.name === name)).toBe(true);
      }
    });

    it('probes readiness on /readyz and liveness on /livez on the port serve listens on, and the Service and PDB select its pods', () => {
      const parsed = parseServeFlags(args.slice(1), env);
      if (!parsed.ok) throw new Error(parsed.message);
      const port = container.ports!.find((p) => p.name === container.readinessProbe!.httpGet!.port)!;
      expect(port.containerPort).toBe(parsed.config.listen.port);
      expect(container.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: port.name });
      expect(container.livenessProbe!.httpGet).toEqual({ path: '/livez', port: port.name });

      const service = find('deploy/service.yaml', 'Service', 'poolscope') as K8sObject & { spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] } };
      expect(matches(service.spec.selector, labels)).toBe(true);
      expect(service.spec.ports[0]!.targetPort).toBe(port.name);
      const pdb = find('deploy/pdb.yaml', 'PodDisruptionBudget') as K8sObject & { spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } } };
      expect(matches(pdb.spec.selector.matchLabels, labels)).toBe(true);
      expect(pdb.spec.maxUnavailable).toBeLessThan(replicas);
    });

    it("runs as rbac.yaml's ServiceAccount, which the ClusterRoleBinding grants EndpointSlice reads", () => {
      const [kustomization] = readYamlDocuments('deploy/kustomization.yaml') as { namespace: string }[];
      const account = find('deploy/rbac.yaml', 'ServiceAccount');
      expect(pod.serviceAccountName).toBe(account.metadata.name);
      expect(account.metadata.namespace).toBe(kustomization!.namespace);
      const binding = find('deploy/rbac.yaml', 'ClusterRoleBinding') as K8sObject & { subjects: { kind: string; name: string; namespace: string }[]; roleRef: { name: string } };
      expect(binding.subjects).toContainEqual({ kind: 'ServiceAccount', name: account.metadata.name, namespace: kustomization!.namespace });
      const role = find('deploy/rbac.yaml', 'ClusterRole', binding.roleRef.name) as K8sObject & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
      expect(role.rules).toContainEqual({ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: expect.arrayContaining(['list', 'watch']) });
    });

    it("the quick-start Secret's URL names the quick-start Redis Service and port", () => {
      const url = new URL(secret.stringData.url!);
      const service = find('deploy/redis/redis.yaml', 'Service') as K8sObject & { spec: { ports: { port: number }[] } };
      expect(url.hostname).toBe(service.metadata.name);
      expect(Number(url.port)).toBe(service.spec.ports[0]!.port);
    });

    describe('the binary started with these flags', () => {
      const redis = useRedis('deploy');
      let replica: PoolscopeProcess;
      beforeAll(async () => {
        const buildError = inject('buildError');
        if (buildError !== null) throw new Error(buildError);
        // The manifest's flags, with the Redis of this test and a free local port instead of 0.0.0.0:8080.
        const local = args.slice(1).filter((a) => !a.startsWith('--listen'));
        replica = await startPoolscope([...local, `--redis-prefix=${redis.prefix}`], { env: { ...env, POOLSCOPE_SERVE_REDIS_URL: redis.url } });
      });
      afterAll(() => replica?.stop());

      it('answers both probes with 200', async () => {
        const readiness = container.readinessProbe!.httpGet!.path;
        const liveness = container.livenessProbe!.httpGet!.path;
        await waitFor(async () => (await fetch(`${replica.url}${readiness}`)).status === 200, { message: readiness });
        expect((await fetch(`${replica.url}${liveness}`)).status).toBe(200);
      });

      it('keeps both probes at 200 while its Redis is frozen (a store outage never restarts nor unlists a replica); /healthz says 503', async () => {
        const readiness = container.readinessProbe!.httpGet!.path;
        const liveness = container.livenessProbe!.httpGet!.path;
        await waitFor(async () => (await fetch(`${replica.url}${readiness}`)).status === 200, { message: readiness });
        redis.pause();
        try {
          await waitFor(async () => (await fetch(`${replica.url}/healthz`)).status === 503, { timeoutMs: 10_000, message: '/healthz 503' });
          // Probed the way the kubelet does, at its period, for longer than the command timeout.
          for (let i = 0; i < 5; i += 1) {
            expect((await fetch(`${replica.url}${liveness}`)).status, liveness).toBe(200);
            expect((await fetch(`${replica.url}${readiness}`)).status, readiness).toBe(200);
            await new Promise((resolve) => setTimeout(resolve, 300));
          }
        } finally {
          redis.resume();
        }
      });
    });
  });

  describe('the PoolRelay sidecar example', () => {
    const file = 'deploy/examples/pool-relay-sidecar.yaml';
    const deployment = find(file, 'Deployment');
    const { pod, labels } = deploymentParts(deployment);
    const relay = pod.containers.find((c) => c.args?.[0] === 'relay')!;
    const dir = mkdtempSync(join(tmpdir(), 'poolscope-sidecar-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** The relay's flags with the ConfigMap written where it would be mounted (a temp dir here). */
    async function parseRelay() {
      const mount = relay.volumeMounts!.find((m) => m.name === 'registration')!;
      const configMapName = pod.volumes!.find((v) => v.name === mount.name)!.configMap!.name;
      const configMap = find(file, 'ConfigMap', configMapName) as K8sObject & { data: Record<string, string> };
      for (const [name, content] of Object.entries(configMap.data)) writeFileSync(join(dir, name), content);
      const args = relay.args!.slice(1).map((a) => a.replace(`=${mount.mountPath}/`, `=${dir}/`));
      const env = envOf(relay, new Map(), { 'metadata.namespace': deployment.metadata.namespace! });
      return { args, env, parsed: await parseRelayFlags(args, env) };
    }

    it('runs `poolscope relay` with flags the real parser accepts, and a registration the contract accepts', async () => {
      const { args, env, parsed } = await parseRelay();
      expect(parsed).toMatchObject({ ok: true, config: { registration: { namespace: 'llm', name: 'llama-70b' } } });
      const listed = await helpFlags('relay');
      const fromEnv = Object.keys(env).map((n) => {
        const flag = flagOfEnvName(relayCommand, n);
        expect(flag, `${n} is a name relay reads`).toBeDefined();
        return flag!;
      });
      for (const name of [...flagNames(args), ...fromEnv]) {
        expect(listed.has(name), `--${name}`).toBe(true);
      }
      expect(relay.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    });

    it("heartbeats to deploy/'s Service, and names its Services as mcs/karmada modes look for them", async () => {
      const { parsed } = await parseRelay();
      if (!parsed.ok) throw new Error(parsed.message);
      const [kustomization] = readYamlDocuments('deploy/kustomization.yaml') as { namespace: string }[];
      const service = find('deploy/service.yaml', 'Service', 'poolscope') as K8sObject & { spec: { ports: { port: number }[] } };
      expect(parsed.config.servers).toEqual([`http://${service.metadata.name}.${kustomization!.namespace}.svc:${service.spec.ports[0]!.port}`]);
      const name = String(parsed.config.registration.name);
      const defaults = parseServeFlags([], {});
      if (!defaults.ok) throw new Error(defaults.message);
      const relayService = find(file, 'Service', `${name}${defaults.config.relayServiceSuffix}`) as K8sObject & { spec: { selector: Record<string, string> } };
      const frontend = find(file, 'Service', `${name}${defaults.config.frontendServiceSuffix}`) as K8sObject & { spec: { selector: Record<string, string>; ports: { name: string }[] } };
      expect(matches(relayService.spec.selector, labels)).toBe(true);
      expect(matches(frontend.spec.selector, labels)).toBe(true);
      expect(frontend.spec.ports.map((p) => p.name)).toContain(defaults.config.frontendPortName);
    });
  });
});
