// Offline checks of Kubernetes objects, no API server: the OpenAPI schema of the object's kind
// (kubernetes-models: required fields, types, enums) and, as the API server's strict field validation
// would, no unknown field at any depth (walked along @kubernetes/client-node's model type maps).
import * as k8s from '@kubernetes/client-node';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Kind {
  model: new (data: never) => { validate(): void };
  /** The @kubernetes/client-node model class name. */
  typeName: string;
}

/** Every kind these checks know, each also walked along @kubernetes/client-node's `V1<kind>` model. */
const MODELS: (Kind['model'] & { apiVersion: string; kind: string })[] = [
  // core, apps, policy, networking
  Namespace, ServiceAccount, Service, Secret, ConfigMap, Deployment, PodDisruptionBudget, NetworkPolicy,
  // RBAC
  ClusterRole, ClusterRoleBinding, Role, RoleBinding,
];

const KINDS: Record<string, Kind> = Object.fromEntries(
  MODELS.map((model): [string, Kind] => [`${model.apiVersion}/${model.kind}`, { model, typeName: `V1${model.kind}` }]),
);

/** Every problem found in `object`, each naming its path; empty when it is valid. */
export function validateK8sObject(object: unknown): string[] {
  if (!isRecord(object) || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') {
    return ['not a Kubernetes object (apiVersion and kind are required)'];
  }
  const kind = KINDS[`${object.apiVersion}/${object.kind}`];
  if (kind === undefined) return [`${object.apiVersion} ${object.kind}: not a kind these checks know`];
  const problems: string[] = [];
  try {
    new kind.model(object as never).validate();
  } catch (error) {
    problems.push(`schema: ${(error as Error).message}`);
  }
  problems.push(...unknownFields(object, kind.typeName, ''));
  return problems;
}

type AttributeMap = { baseName: string; type: string }[];

function attributesOf(typeName: string): AttributeMap | undefined {
  const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => AttributeMap }>)[typeName];
  return model?.getAttributeTypeMap?.();
}

/** Fields the type does not have, and values of the wrong primitive type, along the model type map. */
function unknownFields(value: unknown, type: string, path: string): string[] {
  const at = path || '(top)';
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) return [`${at}: must be a list`];
    return value.flatMap((item, i) => unknownFields(item, array[1]!, `${path}[${i}]`));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (!isRecord(value)) return [`${at}: must be a mapping`];
    return Object.entries(value).flatMap(([key, item]) => unknownFields(item, map[1]!, `${path}.${key}`));
  }
  switch (type) {
    case 'string':
      return typeof value === 'string' ? [] : [`${at}: must be a string`];
    case 'number':
      return typeof value === 'number' ? [] : [`${at}: must be a number`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${at}: must be a boolean`];
    case 'IntOrString':
      return typeof value === 'string' || Number.isInteger(value) ? [] : [`${at}: must be an integer or a string`];
    case 'Date':
    case 'any':
    case 'object':
      return [];
  }
  const attributes = attributesOf(type);
  if (attributes === undefined) return [`${at}: no model for type ${type}`];
  if (!isRecord(value)) return [`${at}: must be a mapping (${type})`];
  const byName = new Map(attributes.map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([key, item]) => {
    const fieldType = byName.get(key);
    const fieldPath = path ? `${path}.${key}` : key;
    if (fieldType === undefined) return [`${fieldPath}: unknown field (${type} has no "${key}")`];
    return unknownFields(item, fieldType, fieldPath);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
