// deploy/networkpolicy.yaml (README.md "Security"): a valid NetworkPolicy that selects the replicas'
// pods and lets in, on the port the Deployment serves, only labelled clients and the monitoring namespace.
import { describe, expect, it } from 'vitest';
import { validateK8sObject, type K8sObject } from './k8s-validate.js';
import { readYamlDocuments } from './support.js';

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

const [policy] = readYamlDocuments('deploy/networkpolicy.yaml') as K8sObject[];
const deployment = (readYamlDocuments('deploy/deployment.yaml') as K8sObject[]).find((o) => o.kind === 'Deployment')!;
const pod = (deployment.spec as { template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports: { name: string; containerPort: number }[] }[] } } }).template;

describe('deploy/networkpolicy.yaml', () => {
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
});
