// A listed pool as GET /pools and the watch stream publish it (docs/contract.md §5): a live pool
// `c1/llm/<name>` with one frontend, with overrides.
import type { ListedPool } from '../../src/contract/index.js';

export function pool(name: string, overrides: Partial<ListedPool> = {}): ListedPool {
  return {
    cluster_id: 'c1',
    namespace: 'llm',
    name,
    model: 'model-a',
    capabilities: [],
    capacity: [],
    location: {},
    relays: [],
    frontends: ['http://10.0.0.1:8000'],
    state: 'live',
    ...overrides,
  };
}
