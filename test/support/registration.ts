// The registration tests send (docs/contract.md §5): one valid pool, `us-east-1/llm/llama-70b`, with
// overrides. An override of `undefined` leaves the field out; an override may be invalid on purpose (the
// HTTP tests send such bodies as they are).
import type { Registration } from '../../src/contract/index.js';

export const REGISTRATION: Registration = {
  cluster_id: 'us-east-1',
  namespace: 'llm',
  name: 'llama-70b',
  model: 'meta-llama/Llama-3.1-70B-Instruct',
  capabilities: ['chat', 'kv-routing'],
  capacity: [{ name: 'gpus', value: 8 }],
  location: { region: 'us-east-1', zone: 'us-east-1a' },
  frontends: ['http://10.0.0.7:8000'],
  relay: 'http://10.0.0.9:9000',
};

export function registration(overrides: Record<string, unknown> = {}): Registration {
  const merged: Record<string, unknown> = { ...REGISTRATION, ...overrides };
  for (const [field, value] of Object.entries(merged)) if (value === undefined) delete merged[field];
  return merged as Registration;
}
