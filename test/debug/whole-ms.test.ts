// /debug/pools shows times in whole milliseconds (docs/contract.md §5): `lease_deadline_ms`, each lease's
// `deadline_ms` and `changed_at_ms`, and the detail's estimate, with the memory store as with Redis
// (whose TIME is read in whole ms).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, request } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

describe('/debug/pools on the memory store', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ leaseMs: 60_000, socket: false });
    // A few pools, heartbeated at moments the sub-millisecond clock makes fractional.
    for (let i = 0; i < 5; i++) expect((await postJson(service.app, registration({ name: `pool-${i}` }))).status).toBe(200);
  });
  afterAll(() => service?.stop());

  it('lease_deadline_ms and every lease time are whole numbers', async () => {
    const body = await waitFor(async () => {
      const list = (await (await request(service.app, '/debug/pools')).json()) as {
        pools: { pool: string; lease_deadline_ms: number | null; leases: { deadline_ms: number; changed_at_ms: number }[] }[];
      };
      return list.pools.length === 5 && list.pools.every((pool) => pool.lease_deadline_ms !== null) ? list : undefined;
    });
    for (const pool of body.pools) {
      expect(Number.isInteger(pool.lease_deadline_ms), `${pool.pool}: ${pool.lease_deadline_ms}`).toBe(true);
      for (const lease of pool.leases) {
        expect(Number.isInteger(lease.deadline_ms), String(lease.deadline_ms)).toBe(true);
        expect(Number.isInteger(lease.changed_at_ms), String(lease.changed_at_ms)).toBe(true);
      }
    }
    const detail = (await (await request(service.app, `/debug/pools/${encodeURIComponent(body.pools[0]!.pool)}`)).json()) as { lease_deadline_estimate_ms: number };
    expect(Number.isInteger(detail.lease_deadline_estimate_ms), String(detail.lease_deadline_estimate_ms)).toBe(true);
  });
});
