// The EndpointSlice loop failing on something it cannot handle (docs/operations.md "Probes", "Metrics"):
// it is restarted after a backoff and counted in /metrics, /healthz answers 503 naming the source while the
// loop is down, and everything returns once the restarted loop is synced. The loop is made to fail through
// a real dependency: its warning hook throws on a real slice that warrants a warning.
import { afterEach, describe, expect, it } from 'vitest';
import { useRedis } from '../support/use-redis.js';
import { eventually, waitFor } from '../support/wait.js';
import { startMcsService, stopMcsServices, type McsService } from './support/mcs-service.js';
import { joinedPoolSlices, slice } from './support/slices.js';

const redis = useRedis('mcs');
afterEach(stopMcsServices);

const pool = { cluster: 'gpu-east-1', namespace: 'llm', pool: 'steady' };

async function healthz(service: McsService): Promise<{ status: number; code?: string; message?: string }> {
  const response = await fetch(`${service.url}/healthz`);
  const body = (await response.json()) as { error?: { code: string; message: string } };
  return { status: response.status, code: body.error?.code, message: body.error?.message };
}

async function restarts(service: McsService): Promise<number | undefined> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('poolscope_kube_loop_restarts_total '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('an EndpointSlice loop that fails unexpectedly', () => {
  it('is restarted with backoff and counted; /healthz is 503 naming kubernetes while it is down, 200 once it is synced', async () => {
    let hookFails = false;
    const service = await startMcsService({
      redis,
      // This test is about the Kubernetes side: a loaded machine's slow Redis must not fail /healthz here.
      redisCommandTimeoutMs: 2000,
      onSliceWarning: () => {
        if (hookFails) throw new Error('warning hook failed');
      },
    });
    for (const object of joinedPoolSlices({ flavour: 'mcs', ...pool, n: 1 })) service.fake.add(object);
    await eventually(() => service.heartbeat(pool));
    await eventually(async () => expect(await service.pools()).toMatchObject({ complete: true, pools: [{ name: 'steady' }] }));
    await eventually(async () => expect((await healthz(service)).status).toBe(200));
    expect(await restarts(service)).toBe(0);

    // A frontend slice without the port named "http": the source warns, and the hook throws.
    service.backoff.hold();
    hookFails = true;
    service.fake.add(slice({ flavour: 'mcs', ...pool, pool: 'other', role: 'frontend', endpoints: [{ ip: '10.2.0.9' }], ports: [{ name: 'grpc', port: 8001 }] }));
    await waitFor(() => service.backoff.waiting === 1, { message: 'the loop waiting to restart' });
    const down = await waitFor(async () => {
      const answer = await healthz(service);
      return answer.code === 'source_down' && answer;
    }, { message: '/healthz naming the source' });
    expect(down.status).toBe(503);
    expect(down.message).toMatch(/^kubernetes: EndpointSlice loop failed unexpectedly \(warning hook failed\); restarting in \d+ ms$/);
    expect(await restarts(service)).toBe(1);
    // The last view stays, marked incomplete.
    expect(await service.pools()).toMatchObject({ complete: false, pools: [{ name: 'steady' }] });

    // The restarted loop relists, and fails again on the same slice: a longer wait, counted again.
    service.backoff.step();
    await waitFor(() => service.backoff.delays.length === 2 && service.backoff.waiting === 1, { message: 'the second restart' });
    expect(await restarts(service)).toBe(2);
    expect(service.backoff.delays[1]!).toBeGreaterThanOrEqual(1600);
    expect((await healthz(service)).code).toBe('source_down');

    // The hook works again: the next restart is synced, /healthz is 200 again.
    hookFails = false;
    service.backoff.release();
    await eventually(async () => expect(await healthz(service)).toEqual({ status: 200 }));
    await eventually(async () => expect(await service.pools()).toMatchObject({ complete: true, pools: [{ name: 'steady' }] }));
    expect(service.source.stats.loopRestarts).toBe(2);
    expect(await restarts(service)).toBe(2);
  });
});
