// /healthz before the store was ever read, on the real binary: a replica started against a Redis port
// nothing listens on answers 503 from its first request (not 200 until a read fails), and 200 once
// Redis comes up there and a read succeeds (docs/contract.md §5, docs/operations.md "Probes").
import { afterEach, describe, expect, it } from 'vitest';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { freePort, randomPrefix, startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { throughout, waitFor } from '../support/wait.js';

/** Long, so a first read that fails only when its time is up would leave /healthz at 200 for seconds. */
const COMMAND_TIMEOUT_MS = 3000;

let replica: PoolscopeProcess | undefined;
let redis: PrivateRedis | undefined;

afterEach(async () => {
  await replica?.stop('SIGKILL');
  await redis?.stop();
  replica = undefined;
  redis = undefined;
});

async function healthz(url: string): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  const response = await fetch(`${url}/healthz`);
  return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
}

describe('/healthz before the first read of the store', () => {
  it('answers 503 until a read succeeds, then 200', async ({ annotate }) => {
    const port = await freePort();
    replica = await startPoolscope([
      '--registration-storage=redis',
      `--redis-url=redis://127.0.0.1:${port}`,
      `--redis-prefix=${randomPrefix('healthz')}`,
      `--redis-command-timeout-ms=${COMMAND_TIMEOUT_MS}`,
    ]);
    const { url } = replica;
    const first = await healthz(url);
    expect(first.status).toBe(503);
    expect(first.body.error).toMatchObject({ code: 'store_unavailable', message: expect.stringMatching(/not read yet|cannot be read/) });
    await throughout(1000, 50, async () => expect((await healthz(url)).status).toBe(503));

    redis = await startPrivateRedis({ port });
    const up = performance.now();
    await waitFor(async () => (await healthz(url)).status === 200, { timeoutMs: 15_000, message: '/healthz 200' });
    const healthyMs = Math.round(performance.now() - up);
    await annotate(`/healthz 200 ${healthyMs} ms after Redis answered on its port`);
    // Recovery is bounded by the store's reconnect and re-read backoff (2 s each at most), not 30 s.
    expect(healthyMs).toBeLessThan(COMMAND_TIMEOUT_MS + 2 * 2000);
  });
});
