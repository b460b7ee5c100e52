// deploy/networkpolicy (README.md "Security", deploy/README.md "NetworkPolicy"): a kustomize Component whose
// NetworkPolicy is valid, selects the replicas' pods and lets in, on the port the Deployment serves, only
// labelled clients and the monitoring namespace; added to an overlay of deploy/ (or of a region's), it
// lands in namespace poolscope beside the service, as deploy/README.md's overlay says.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateK8sObject, type K8sObject } from './k8s-validate.js';
import { hasCommand, parseYamlDocuments, readYamlDocuments, REPO_ROOT } from './support.js';

interface Peer {
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: unknown;
}
interface PolicySpec {
  podSelector: { matchLabels: Record<string, string> };
  policyTypes: string[];
  ingress: { from: Peer[]; ports: { protocol: string; port: string | number }[] }[];
}

const [policy] = readYamlDocuments('deploy/networkpolicy/networkpolicy.yaml') as K8sObject[];
const deployment = (readYamlDocuments('deploy/deployment.yaml') as K8sObject[]).find((o) => o.kind === 'Deployment')!;
const pod = (deployment.spec as { template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports: { name: string; containerPort: number }[] }[] } } }).template;

describe('deploy/networkpolicy', () => {
  const spec = policy!.spec as PolicySpec;

  it('is a valid NetworkPolicy in namespace poolscope', () => {
    expect(policy!.kind).toBe('NetworkPolicy');
    expect(validateK8sObject(policy)).toEqual([]);
    expect(policy!.metadata.namespace).toBe('poolscope');
  });

  it("selects the Deployment's pods and restricts ingress only (Redis and the Kubernetes API stay reachable)", () => {
    for (const [key, value] of Object.entries(spec.podSelector.matchLabels)) expect(pod.metadata.labels[key]).toBe(value);
    expect(spec.policyTypes).toEqual(['Ingress']);
  });

  it('lets in only labelled clients and the monitoring namespace, on the port serve listens on', () => {
    expect(spec.ingress).toHaveLength(1);
    const [rule] = spec.ingress;
    const served = pod.spec.containers[0]!.ports.find((port) => port.name === rule!.ports[0]!.port);
    expect(served?.containerPort).toBe(8080);
    expect(rule!.from).toEqual([
      { namespaceSelector: {}, podSelector: { matchLabels: { 'poolscope.io/client': 'true' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
  });

  it('is a kustomize Component holding the NetworkPolicy alone', () => {
    const [component] = readYamlDocuments('deploy/networkpolicy/kustomization.yaml') as { apiVersion: string; kind: string; resources: string[] }[];
    expect(component).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component', resources: ['networkpolicy.yaml'] });
  });

  describe.skipIf(!hasCommand('kubectl'))('added to an overlay and built with kubectl kustomize', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'poolscope-networkpolicy-'));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    /** deploy/README.md's overlay, pointed at this checkout's deploy/ (or a region's overlay). */
    function buildOverlay(name: string, base: string): K8sObject[] {
      const guide = readFileSync(join(REPO_ROOT, 'deploy/README.md'), 'utf8');
      const section = guide.slice(guide.indexOf('## NetworkPolicy'), guide.indexOf('\n## ', guide.indexOf('## NetworkPolicy') + 1));
      const snippet = /```yaml\n# my-overlay\/kustomization\.yaml\n([\s\S]*?)```/.exec(section)?.[1];
      expect(snippet, "deploy/README.md's overlay").toBeDefined();
      const dir = join(scratch, name);
      mkdirSync(dir);
      const deploy = relative(dir, join(REPO_ROOT, 'deploy'));
      const text = snippet!.replace(/- \.\.\/deploy( .*)?\n/, `- ${relative(dir, join(REPO_ROOT, base))}\n`).replaceAll('../deploy/', `${deploy}/`);
      writeFileSync(join(dir, 'kustomization.yaml'), text);
      return parseYamlDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }), name) as K8sObject[];
    }

    it.each([
      ['deploy', 'deploy'],
      ['a region', 'deploy/regions/us-east-1'],
    ])('on %s: the NetworkPolicy lands in namespace poolscope, beside the Deployment it selects', (_label, base) => {
      const built = buildOverlay(base.replaceAll('/', '-'), base);
      const policies = built.filter((o) => o.kind === 'NetworkPolicy');
      expect(policies.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['poolscope/poolscope']);
      expect(validateK8sObject(policies[0])).toEqual([]);
      const deployed = built.find((o) => o.kind === 'Deployment')!;
      expect(deployed.metadata.namespace).toBe('poolscope');
      const labels = (deployed.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
      const selector = (policies[0]!.spec as PolicySpec).podSelector.matchLabels;
      for (const [key, value] of Object.entries(selector)) expect(labels[key]).toBe(value);
    });
  });
});
