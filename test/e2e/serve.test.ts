// End to end through the real binary, started as README.md says (`npm start`): a relay
// heartbeats at the interval the reply gives; the pool stays listed while heartbeats flow and leaves
// within lease + 1 s after they stop; SIGTERM drains and exits 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heartbeatReplySchema } from '../../src/contract/index.js';
import { listPools, postJson } from '../support/http.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { throughout, waitFor } from '../support/wait.js';

const LEASE_SECS = 1.5;

describe('poolscope serve (the binary)', () => {
  let svc: PoolscopeProcess;
  beforeAll(async () => {
    svc = await startPoolscope([`--lease-duration-secs=${LEASE_SECS}`, '--heartbeat-interval-secs=0.5'], { via: 'npm-start' });
  });
  afterAll(async () => {
    await svc.stop('SIGKILL');
  });

  const names = async () => (await listPools(svc.url)).pools.map((p) => p.name);

  it('logs one start line with the listen address, mode and store', async () => {
    await waitFor(() => svc.logs.some((l) => l.msg === 'poolscope serving'), { message: 'the start line' });
    const start = svc.logs.filter((l) => l.msg === 'poolscope serving');
    expect(start).toHaveLength(1);
    expect(start[0]).toMatchObject({
      level: 30,
      listen: svc.url,
      pool_discovery: 'registrations',
      registration_storage: 'memory',
    });
  });

  it('keeps heartbeating pools listed and drops them within lease + 1 s after the last heartbeat', async () => {
    const pools = ['alpha', 'beta', 'gamma'];
    let lastBeat = 0;
    let intervalMs = 0;
    const beat = async () => {
      await Promise.all(
        pools.map(async (name) => {
          const response = await postJson(svc.url, registration({ name }));
          expect(response.status).toBe(200);
          intervalMs = heartbeatReplySchema.parse(await response.json()).heartbeat_interval_ms;
        }),
      );
      lastBeat = Date.now();
    };
    await beat();
    expect(intervalMs).toBe(500);
    await waitFor(async () => (await names()).length === 3, { message: 'three pools listed' });
    // Heartbeat for three lease durations at the interval the reply named; the pools never leave.
    await throughout(3 * LEASE_SECS * 1000, intervalMs, async () => {
      await beat();
      expect(await names()).toEqual(pools);
    });
    const stoppedAt = lastBeat;
    await waitFor(async () => (await names()).length === 0, {
      timeoutMs: LEASE_SECS * 1000 + 1000 + 500,
      intervalMs: 25,
      message: 'pools to leave',
    });
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(LEASE_SECS * 1000 + 1000);
    const debug = (await (await fetch(`${svc.url}/debug/pools/us-east-1/llm/alpha`)).json()) as {
      history: { from: string; to: string }[];
    };
    expect(debug.history.map((h) => `${h.from}→${h.to}`)).toEqual(['absent→live', 'live→lapsed']);
  });

  it('drains on SIGTERM and exits 0', async () => {
    const other = await startPoolscope([]);
    expect(await other.stop('SIGTERM')).toBe(0);
    expect(other.logs.some((l) => l.msg === 'draining' && l.signal === 'SIGTERM')).toBe(true);
  });
});
