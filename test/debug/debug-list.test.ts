// GET /debug/pools and GET /debug/pools/{key} (src/http/debug.ts) with the service built per test, so what
// they pin is traced to them: the list in key order whatever order the pools came in, and the 404 that
// names the pool asked for.
import { afterEach, describe, expect, it } from 'vitest';
import type { DebugPoolList } from '../../src/debug/describe.js';
import { postJson } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

describe('/debug/pools', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  it('lists the pools in key order, not in the order they first beat', async () => {
    svc = await startService({ leaseMs: 15_000, socket: false });
    for (const name of ['charlie', 'alpha', 'bravo']) {
      expect((await postJson(svc.app, registration({ name }))).status).toBe(200);
    }
    const list = await waitFor(
      async () => {
        const body = (await (await svc!.app.request('/debug/pools')).json()) as DebugPoolList;
        return body.pools.length === 3 && body;
      },
      { message: 'three pools on /debug/pools' },
    );
    expect(list.pools.map((p) => p.pool)).toEqual(['us-east-1/llm/alpha', 'us-east-1/llm/bravo', 'us-east-1/llm/charlie']);
  });

  it('answers a pool this replica has no machine for with 404 not_found, naming it', async () => {
    svc = await startService({ leaseMs: 15_000, socket: false });
    const missing = await svc.app.request(`/debug/pools/${encodeURIComponent('us-east-1/llm/nowhere')}`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'not_found', message: 'no pool us-east-1/llm/nowhere on this replica' } });
  });
});
