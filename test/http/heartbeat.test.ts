// POST /pools: every status code and field rule of docs/contract.md §5; a refused request changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, heartbeatReplySchema } from '../../src/contract/index.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { StoreUnavailableError, type RegistrationStore } from '../../src/store/types.js';
import { listPools, postJson } from '../support/http.js';
import { REGISTRATION, registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const long = (n: number) => 'a'.repeat(n);

/** [what, body, field (undefined: whole-body error), code] */
const BAD_BODIES: [string, unknown, string | undefined, string][] = [
  ['cluster_id missing', registration({ cluster_id: undefined }), 'cluster_id', 'invalid_field'],
  ['cluster_id empty', registration({ cluster_id: '' }), 'cluster_id', 'invalid_field'],
  ['cluster_id upper case', registration({ cluster_id: 'US-East-1' }), 'cluster_id', 'invalid_field'],
  ['cluster_id leading space', registration({ cluster_id: ' us-east-1' }), 'cluster_id', 'invalid_field'],
  ['cluster_id trailing newline', registration({ cluster_id: 'us-east-1\n' }), 'cluster_id', 'invalid_field'],
  ['cluster_id underscore', registration({ cluster_id: 'us_east' }), 'cluster_id', 'invalid_field'],
  ['cluster_id with slash', registration({ cluster_id: 'a/b' }), 'cluster_id', 'invalid_field'],
  ['cluster_id 254 chars', registration({ cluster_id: long(254) }), 'cluster_id', 'invalid_field'],
  ['cluster_id label of 64', registration({ cluster_id: long(64) }), 'cluster_id', 'invalid_field'],
  ['cluster_id a number', registration({ cluster_id: 7 }), 'cluster_id', 'invalid_field'],
  ['namespace ends with dash', registration({ namespace: 'llm-' }), 'namespace', 'invalid_field'],
  ['namespace empty label', registration({ namespace: 'a..b' }), 'namespace', 'invalid_field'],
  ['name missing', registration({ name: undefined }), 'name', 'invalid_field'],
  ['name with colon', registration({ name: 'a:b' }), 'name', 'invalid_field'],
  ['name with braces', registration({ name: '{x}' }), 'name', 'invalid_field'],
  ['name unicode', registration({ name: 'llamá' }), 'name', 'invalid_field'],
  ['model missing', registration({ model: undefined }), 'model', 'invalid_field'],
  ['model empty', registration({ model: '' }), 'model', 'invalid_field'],
  ['model 513 chars', registration({ model: long(513) }), 'model', 'invalid_field'],
  ['capabilities not a list', registration({ capabilities: 'chat' }), 'capabilities', 'invalid_field'],
  ['capabilities 65 items', registration({ capabilities: Array.from({ length: 65 }, (_, i) => `c${i}`) }), 'capabilities', 'invalid_field'],
  ['capabilities item a number', registration({ capabilities: ['chat', 3] }), 'capabilities.1', 'invalid_field'],
  ['capacity 65 items', registration({ capacity: Array.from({ length: 65 }, () => ({ name: 'gpus', value: 1 })) }), 'capacity', 'invalid_field'],
  ['capacity value a string', registration({ capacity: [{ name: 'gpus', value: '8' }] }), 'capacity.0.value', 'invalid_field'],
  ['capacity name missing', registration({ capacity: [{ value: 8 }] }), 'capacity.0.name', 'invalid_field'],
  ['capacity item unknown key', registration({ capacity: [{ name: 'gpus', value: 8, unit: 'x' }] }), 'capacity.0.unit', 'unknown_field'],
  ['location region a number', registration({ location: { region: 1 } }), 'location.region', 'invalid_field'],
  ['location unknown key', registration({ location: { floor: '3' } }), 'location.floor', 'unknown_field'],
  ['frontend not a URL', registration({ frontends: ['10.0.0.7:8000'] }), 'frontends.0', 'invalid_field'],
  ['frontend ftp', registration({ frontends: ['http://ok:1', 'ftp://10.0.0.7'] }), 'frontends.1', 'invalid_field'],
  ['relay not a URL', registration({ relay: 'relay-1' }), 'relay', 'invalid_field'],
  ['unknown top-level key', registration({ colour: 'blue' }), 'colour', 'unknown_field'],
  ['body an array', [registration()], undefined, 'invalid_field'],
  ['body a string', 'x', undefined, 'invalid_field'],
  ['body null', null, undefined, 'invalid_field'],
];

describe('POST /pools', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 15_000, heartbeatIntervalMs: 5000, socket: false });
  });
  afterAll(() => svc.stop());

  async function storedKeys(): Promise<string[]> {
    return (await svc.store.snapshot()).records.map((r) => r.key);
  }

  it.each(BAD_BODIES)('refuses %s with 400 naming the field, storing nothing', async (_what, body, field, code) => {
    const response = await postJson(svc.app, JSON.stringify(body));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    const error = errorBodySchema.parse(await response.json()).error;
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
    expect(error.message.length).toBeGreaterThan(0);
    expect(await storedKeys()).toEqual([]);
  });

  it('refuses malformed JSON with invalid_json and no field', async () => {
    const response = await postJson(svc.app, '{"cluster_id": ');
    expect(response.status).toBe(400);
    const { error } = errorBodySchema.parse(await response.json());
    expect(error.code).toBe('invalid_json');
    expect(error.field).toBeUndefined();
    expect(await storedKeys()).toEqual([]);
  });

  it('refuses a body over 64 KiB with 413', async () => {
    const body = JSON.stringify(registration({ model: 'm', capabilities: [long(500)] })) + ' '.repeat(64 * 1024);
    const response = await postJson(svc.app, body);
    expect(response.status).toBe(413);
    expect(errorBodySchema.parse(await response.json()).error.code).toBe('payload_too_large');
    expect(await storedKeys()).toEqual([]);
  });

  it('refuses a body over 64 KiB sent chunked (no content-length) with 413', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 6) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const response = await svc.app.request('/pools', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await storedKeys()).toEqual([]);
  });

  it.each([['text/plain'], ['multipart/form-data; boundary=x'], [undefined]])(
    'refuses content type %s with 415',
    async (type) => {
      const response = await svc.app.request('/pools', {
        method: 'POST',
        headers: type ? { 'content-type': type } : {},
        body: new Blob([JSON.stringify(registration())]),
      });
      expect(response.status).toBe(415);
      expect(errorBodySchema.parse(await response.json()).error.code).toBe('unsupported_media_type');
      expect(await storedKeys()).toEqual([]);
    },
  );

  it('answers 200 with the pool key, lease and heartbeat interval, and the pool is listed', async () => {
    const response = await postJson(svc.app, registration());
    expect(response.status).toBe(200);
    expect(heartbeatReplySchema.parse(await response.json())).toEqual({
      pool: 'us-east-1/llm/llama-70b',
      lease_ms: 15_000,
      heartbeat_interval_ms: 5000,
    });
    const list = await waitFor(async () => {
      const body = await listPools(svc.app);
      return body.pools.length === 1 && body;
    });
    // Every field as sent, the one `relay` as `relays`.
    const { relay, ...sent } = REGISTRATION;
    expect(list.pools[0]).toEqual({ ...sent, relays: [relay], state: 'live' });
  });

  it('takes a curl -d body (form content type) as JSON, strictly', async () => {
    const ok = await svc.app.request('/pools', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify(registration({ name: 'curl-pool' })),
    });
    expect(ok.status).toBe(200);
    const form = await svc.app.request('/pools', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'cluster_id=a&name=b',
    });
    expect(form.status).toBe(400);
    expect(errorBodySchema.parse(await form.json()).error.code).toBe('invalid_json');
  });

  it('applies the defaults of optional fields', async () => {
    const response = await postJson(svc.app, {
      cluster_id: 'eu-west-2',
      namespace: 'llm',
      name: 'minimal',
      model: 'm',
    });
    expect(response.status).toBe(200);
    const pool = await waitFor(async () => {
      const body = await listPools(svc.app, '?model=m');
      return body.pools[0];
    });
    expect(pool).toMatchObject({ capabilities: [], capacity: [], location: {}, relays: [], frontends: [], state: 'frontendless' });
  });
});

describe('POST /pools with bearer tokens', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ authTokens: ['s3cret-token', 'second.token'], socket: false });
  });
  afterAll(() => svc.stop());

  it.each([
    ['no Authorization header', {}],
    ['a wrong token', { authorization: 'Bearer wrong' }],
    ['a malformed header', { authorization: 'Basic abc' }],
    ['a token with spaces', { authorization: 'Bearer a b' }],
  ])('answers 401 for %s and stores nothing', async (_what, headers) => {
    const response = await postJson(svc.app, registration(), headers as Record<string, string>);
    expect(response.status).toBe(401);
    expect(errorBodySchema.parse(await response.json()).error.code).toBe('unauthorized');
    expect((await svc.store.snapshot()).records).toEqual([]);
  });

  it('accepts any configured token; GET stays open', async () => {
    expect((await postJson(svc.app, registration(), { authorization: 'Bearer second.token' })).status).toBe(200);
    expect((await svc.app.request('/pools')).status).toBe(200);
  });
});

/** Our own RegistrationStore whose heartbeats fail as an unreachable Redis does. */
function unreachableStore(): RegistrationStore {
  const inner = createMemoryStore({ leaseMs: 15_000 });
  return {
    kind: inner.kind,
    forgetsOnRestart: inner.forgetsOnRestart,
    heartbeat: async () => {
      throw new StoreUnavailableError('connect ECONNREFUSED 127.0.0.1:1');
    },
    snapshot: () => inner.snapshot(),
    watch: (position, signal, epoch, reached) => inner.watch(position, signal, epoch, reached),
    sweep: () => inner.sweep(),
    dueLapses: (graceMs) => inner.dueLapses(graceMs),
    close: () => inner.close(),
  };
}

describe('POST /pools when the store cannot be reached', () => {
  it('answers 503 store_unavailable', async () => {
    const svc = await startService({ store: unreachableStore(), socket: false });
    try {
      const response = await postJson(svc.app, registration());
      expect(response.status).toBe(503);
      const { error } = errorBodySchema.parse(await response.json());
      expect(error.code).toBe('store_unavailable');
      expect(error.message).toMatch(/ECONNREFUSED/);
    } finally {
      await svc.stop();
    }
  });
});
