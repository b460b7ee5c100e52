// deploy/rbac.yaml grants exactly what the EndpointSlice source asks for (get, list, watch on
// discovery.k8s.io endpointslices) in both variants, each selectable by its label; README documents the
// MCS modes, the Services each pool exports and every warning.
import { readFileSync } from 'node:fs';
import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/process.js';

interface KubeDoc {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  rules?: unknown[];
  roleRef?: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace: string }>;
}

const docs = loadAllYaml(readFileSync(`${REPO_ROOT}/deploy/rbac.yaml`, 'utf8')) as KubeDoc[];
const selected = (label: string) => docs.filter((doc) => doc.metadata.labels?.[label] === 'true');
const READ_SLICES = [{ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] }];
const SUBJECT = [{ kind: 'ServiceAccount', name: 'poolscope', namespace: 'poolscope' }];

describe('deploy/rbac.yaml', () => {
  it('every object belongs to a variant', () => {
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      expect(Object.keys(doc.metadata.labels ?? {}).some((label) => label.startsWith('poolscope.io/rbac-')), doc.kind).toBe(true);
    }
  });

  it('all namespaces: a ClusterRole reading EndpointSlices, bound to the ServiceAccount', () => {
    const variant = selected('poolscope.io/rbac-all-namespaces');
    expect(variant.map((doc) => doc.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'ServiceAccount']);
    const role = variant.find((doc) => doc.kind === 'ClusterRole')!;
    expect(role.rules).toEqual(READ_SLICES);
    const binding = variant.find((doc) => doc.kind === 'ClusterRoleBinding')!;
    expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name: role.metadata.name });
    expect(binding.subjects).toEqual(SUBJECT);
  });

  it('one namespace (--namespace): a Role reading EndpointSlices in that namespace, bound to the ServiceAccount', () => {
    const variant = selected('poolscope.io/rbac-one-namespace');
    expect(variant.map((doc) => doc.kind).sort()).toEqual(['Role', 'RoleBinding', 'ServiceAccount']);
    const role = variant.find((doc) => doc.kind === 'Role')!;
    expect(role.rules).toEqual(READ_SLICES);
    const binding = variant.find((doc) => doc.kind === 'RoleBinding')!;
    expect(binding.metadata.namespace).toBe(role.metadata.namespace);
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual(SUBJECT);
  });
});

describe('README "MCS modes"', () => {
  const readme = readFileSync(`${REPO_ROOT}/README.md`, 'utf8');
  const start = readme.indexOf('## MCS modes');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));

  it('follows the API section and names both modes and the exported Services', () => {
    expect(start).toBeGreaterThan(readme.indexOf('## API'));
    for (const text of ['`mcs`', '`karmada`', '`<dgd>-pool-relay`', '`<dgd>-frontend`', 'headless', 'deploy/README.md']) {
      expect(section).toContain(text);
    }
  });

  it('documents every warning with its fields', () => {
    for (const text of ['`unregistered`', '`one-sided`', '`lapsed`', '`frontend_slices_with_port`', '`frontend_service`', '`port_name`', '`since`']) {
      expect(section).toContain(text);
    }
  });
});
