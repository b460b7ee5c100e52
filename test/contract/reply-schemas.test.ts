// The shapes routers and PoolRelays read (docs/contract.md §5): a valid reply parses to itself, and one
// missing a field is refused. The OpenAPI document and the client are built on these schemas.
import { describe, expect, it } from 'vitest';
import {
  errorBodySchema,
  heartbeatReplySchema,
  listedPoolSchema,
  poolIdSchema,
  poolListSchema,
  regionStatusSchema,
  watchEventSchemas,
} from '../../src/contract/index.js';

const POOL = {
  cluster_id: 'us-east-1',
  namespace: 'llm',
  name: 'llama-70b',
  model: 'm',
  capabilities: ['chat'],
  capacity: [{ name: 'gpus', value: 8 }],
  location: { region: 'us-east-1' },
  relays: ['http://10.0.0.9:9000'],
  frontends: ['http://10.0.0.7:8000'],
  state: 'live',
} as const;
const REGION = { name: 'eu-west-1', complete: false, reason: 'timeout', unreachable_since: '2026-11-30T00:00:00.000Z', dropped: false };
const LIST = { complete: true, revision: '1-2', pools: [POOL], regions: [REGION] };

describe('reply schemas', () => {
  it.each<[string, { safeParse(value: unknown): { success: boolean; data?: unknown } }, Record<string, unknown>]>([
    ['pool id', poolIdSchema, { cluster_id: 'c', namespace: 'n', name: 'p' }],
    ['listed pool', listedPoolSchema, { ...POOL, lease_regions: ['eu-west-1'] }],
    ['region status', regionStatusSchema, REGION],
    ['pool list', poolListSchema, LIST],
    ['heartbeat reply', heartbeatReplySchema, { pool: 'c/n/p', lease_ms: 15000, heartbeat_interval_ms: 5000 }],
    ['error body', errorBodySchema, { error: { code: 'invalid_field', message: 'name: must not be empty', field: 'name' } }],
    ['upsert event', watchEventSchemas.upsert, { revision: '1-3', pool: POOL }],
    ['delete event', watchEventSchemas.delete, { revision: '1-4', pool: { cluster_id: 'c', namespace: 'n', name: 'p' } }],
  ])('%s: parses to itself, and refuses it without any one of its fields', (_what, schema, value) => {
    expect(schema.safeParse(value)).toEqual({ success: true, data: value });
    for (const field of Object.keys(value)) {
      if (['lease_regions', 'regions', 'reason', 'unreachable_since'].includes(field)) continue;
      const { [field]: _left, ...rest } = value;
      expect(schema.safeParse(rest).success, `without ${field}`).toBe(false);
    }
  });

  it('an error body without a field, and one whose error is not an object', () => {
    expect(errorBodySchema.safeParse({ error: { code: 'internal', message: 'x' } }).success).toBe(true);
    expect(errorBodySchema.safeParse({ error: 'internal' }).success).toBe(false);
    expect(errorBodySchema.safeParse({ error: { code: 'internal' } }).success).toBe(false);
  });

  it('a listed pool is live or frontendless, never another state', () => {
    expect(listedPoolSchema.safeParse({ ...POOL, state: 'frontendless' }).success).toBe(true);
    expect(listedPoolSchema.safeParse({ ...POOL, state: 'lapsed' }).success).toBe(false);
  });

  it('a heartbeat reply carries positive whole milliseconds', () => {
    for (const lease_ms of [0, -1, 1.5]) {
      expect(heartbeatReplySchema.safeParse({ pool: 'c/n/p', lease_ms, heartbeat_interval_ms: 5000 }).success).toBe(false);
    }
  });
});
