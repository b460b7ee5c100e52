// deploy/monitoring: a kustomize Component for prometheus-operator whose ServiceMonitor scrapes the
// Service of deploy/ in the job the rules expect, and whose PrometheusRule is the rules file, generated
// (scripts/monitoring.mjs) and committed unchanged; both objects valid against the CRDs' fields; added to
// deploy/ it renders with `kubectl kustomize` where installed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { hasCommand, parseYamlDocuments, readYamlDocuments } from '../deploy/support.js';
import type { K8sObject } from '../deploy/k8s-validate.js';
import { validateOperatorObject } from './operator-validate.js';
import { alertsOf, monitoringScript, readRules, REPO_ROOT, RULES_FILE, scratchDir } from './support.js';

const KUSTOMIZATION = 'deploy/monitoring/kustomization.yaml';
const [component] = readYamlDocuments(KUSTOMIZATION) as { apiVersion: string; kind: string; resources: string[] }[];
const objects = component!.resources.flatMap((file) => readYamlDocuments(`deploy/monitoring/${file}`)) as K8sObject[];
const find = (kind: string) => objects.find((o) => o.kind === kind)!;

interface ServiceMonitorSpec {
  selector: { matchLabels: Record<string, string> };
  endpoints: { port: string; path: string; interval: string }[];
  jobLabel?: string;
}

describe('deploy/monitoring', () => {
  it('is a kustomize Component naming a ServiceMonitor and a PrometheusRule that exist', () => {
    expect(component).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component' });
    for (const file of component!.resources) expect(existsSync(join(REPO_ROOT, 'deploy/monitoring', file)), file).toBe(true);
    expect(objects.map((o) => o.kind).sort()).toEqual(['PrometheusRule', 'ServiceMonitor']);
  });

  it.each(['ServiceMonitor', 'PrometheusRule'])('%s: valid against the CRD fields, in namespace poolscope', (kind) => {
    const object = find(kind);
    expect(validateOperatorObject(object)).toEqual([]);
    expect(object.metadata.namespace).toBe('poolscope');
  });

  it('the validation refuses what the API server would (an unknown field, a bad duration, a rule without expr)', () => {
    const monitor = structuredClone(find('ServiceMonitor')) as K8sObject & { spec: ServiceMonitorSpec & Record<string, unknown> };
    monitor.spec.endpoints[0]!.interval = '30 seconds';
    monitor.spec.endpoint = [];
    expect(validateOperatorObject(monitor)).toEqual(['spec.endpoints[0].interval: "30 seconds" does not match ' + String(/^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/), 'spec.endpoint: unknown field']);
    const rule = structuredClone(find('PrometheusRule')) as K8sObject & { spec: { groups: { rules: Record<string, unknown>[] }[] } };
    delete rule.spec.groups[0]!.rules[0]!.expr;
    rule.spec.groups[0]!.rules[1]!.alert = 'Both';
    expect(validateOperatorObject(rule)).toEqual(['spec.groups[0].rules[0].expr: required', 'spec.groups[0].rules[1]: exactly one of record and alert']);
  });

  it("the ServiceMonitor scrapes /metrics on the poolscope Service's named port, so the job is `poolscope` as the rules expect", () => {
    const spec = find('ServiceMonitor').spec as ServiceMonitorSpec;
    const [service] = readYamlDocuments('deploy/service.yaml') as (K8sObject & { spec: { ports: { name: string }[] } })[];
    for (const [label, value] of Object.entries(spec.selector.matchLabels)) expect(service!.metadata.labels?.[label], label).toBe(value);
    expect(service!.spec.ports.map((p) => p.name)).toContain(spec.endpoints[0]!.port);
    expect(spec.endpoints[0]!.path).toBe('/metrics');
    // prometheus-operator names the job after the Service unless jobLabel says otherwise.
    expect(spec.jobLabel).toBeUndefined();
    expect(service!.metadata.name).toBe('poolscope');
    const jobs = new Set(alertsOf(readRules()).flatMap((a) => [...a.expr.matchAll(/job="([^"]+)"/g)].map((m) => m[1])));
    expect([...jobs]).toEqual(['poolscope']);
  });

  it('the PrometheusRule holds the rules file unchanged, and is what `scripts/monitoring.mjs prometheusrule` generates', async () => {
    const generated = await monitoringScript('prometheusrule');
    expect(generated.code, generated.output).toBe(0);
    expect(readFileSync(join(REPO_ROOT, 'deploy/monitoring/prometheusrule.yaml'), 'utf8'), 'run npm run monitoring:generate').toBe(generated.output);
    expect((find('PrometheusRule').spec as { groups: unknown }).groups).toEqual(parse(readFileSync(RULES_FILE, 'utf8')).groups);
  });

  describe.skipIf(!hasCommand('kubectl'))('added to deploy/ and built with kubectl kustomize', () => {
    const scratch = scratchDir('monitoring-overlay');
    afterAll(() => scratch.remove());

    it('renders the service with the ServiceMonitor and PrometheusRule, all in namespace poolscope', () => {
      const path = (dir: string) => relative(scratch.dir, join(REPO_ROOT, dir));
      writeFileSync(join(scratch.dir, 'kustomization.yaml'), `resources:\n  - ${path('deploy')}\ncomponents:\n  - ${path('deploy/monitoring')}\n`);
      const built = parseYamlDocuments(execFileSync('kubectl', ['kustomize', scratch.dir], { encoding: 'utf8' }), 'overlay') as K8sObject[];
      const monitoring = built.filter((o) => o.apiVersion === 'monitoring.coreos.com/v1');
      expect(monitoring.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
        'PrometheusRule/poolscope/poolscope',
        'ServiceMonitor/poolscope/poolscope',
      ]);
      for (const object of monitoring) expect(validateOperatorObject(object)).toEqual([]);
      expect(built.find((o) => o.kind === 'Service')?.metadata.namespace).toBe('poolscope');
    });

    it("README's overlay (\"Monitoring\") builds, labelling both objects for the Prometheus that selects them", () => {
      const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
      const section = readme.slice(readme.indexOf('\n## Monitoring\n'), readme.indexOf('\n## ', readme.indexOf('\n## Monitoring\n') + 1));
      const snippet = /```yaml\n# my-overlay\/kustomization\.yaml\n([\s\S]*?)```/.exec(section)?.[1];
      expect(snippet, 'the overlay snippet').toBeDefined();
      const dir = join(scratch.dir, 'my-overlay');
      mkdirSync(dir, { recursive: true });
      // The snippet's overlay sits beside deploy/; here it points at the checkout's.
      writeFileSync(join(dir, 'kustomization.yaml'), snippet!.replaceAll('../deploy', relative(dir, join(REPO_ROOT, 'deploy'))));
      const built = parseYamlDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }), 'README overlay') as K8sObject[];
      const monitoring = built.filter((o) => o.apiVersion === 'monitoring.coreos.com/v1');
      expect(monitoring).toHaveLength(2);
      for (const object of monitoring) expect(object.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
      const deployment = built.find((o) => o.kind === 'Deployment') as K8sObject & { spec: { selector: { matchLabels: Record<string, string> } } };
      expect(deployment.spec.selector.matchLabels).not.toHaveProperty('release');
    });
  });
});
