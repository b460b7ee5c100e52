// Pool keys: `cluster_id/namespace/name` (docs/contract.md §1). The parts are DNS-1123 names, which
// cannot hold '/', so the joined form is unambiguous.

export interface PoolId {
  cluster_id: string;
  namespace: string;
  name: string;
}

/** `cluster_id/namespace/name` */
export type PoolKey = string;

export function poolKey(id: PoolId): PoolKey {
  return `${id.cluster_id}/${id.namespace}/${id.name}`;
}

export function parsePoolKey(key: PoolKey): PoolId {
  const parts = key.split('/');
  if (parts.length !== 3 || parts.some((p) => p === '')) {
    throw new Error(`pool key must be cluster_id/namespace/name, got ${JSON.stringify(key)}`);
  }
  const [cluster_id, namespace, name] = parts as [string, string, string];
  return { cluster_id, namespace, name };
}
