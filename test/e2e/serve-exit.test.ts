// `poolscope serve` with the Redis store ends its process as soon as it has stopped: after SIGTERM it
// drains, logs `stopped`, and exits 0 without waiting on a connection left half-closed (the change-log
// follower's XREAD, blocked on Redis, kept its socket open for ioredis's 2 s disconnect timeout).
import { describe, expect, it } from 'vitest';
import { listPools, postJson } from '../support/http.js';
import { redisReplicaFlags, startPoolscope } from '../support/process.js';
import { registration } from '../support/registration.js';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';

/** Well under the 2 s the half-closed socket used to hold the process; far above a clean exit (~0.1 s). */
const EXIT_AFTER_STOPPED_MS = 1000;

describe('poolscope serve with the Redis store', () => {
  const redis = useRedis('serve-exit');

  it('exits 0 as soon as it logs `stopped`, with pools listed and changes followed', async () => {
    const svc = await startPoolscope(redisReplicaFlags(redis, redis.prefix));
    try {
      const response = await postJson(svc.url, registration({ name: 'exit-a' }));
      expect(response.status).toBe(200);
      await waitFor(async () => (await listPools(svc.url)).pools.some((p) => p.name === 'exit-a'), { message: 'the pool listed' });
    } catch (error) {
      await svc.stop('SIGKILL');
      throw error;
    }
    let stoppedAt = 0;
    const watchStopped = setInterval(() => {
      if (stoppedAt === 0 && svc.logs.some((l) => l.msg === 'stopped')) stoppedAt = performance.now();
    }, 5);
    svc.child.kill('SIGTERM');
    const code = await svc.exited;
    const exitedAt = performance.now();
    clearInterval(watchStopped);
    if (stoppedAt === 0 && svc.logs.some((l) => l.msg === 'stopped')) stoppedAt = exitedAt;
    await svc.stop('SIGKILL');
    expect(code).toBe(0);
    expect(stoppedAt, 'the `stopped` line').toBeGreaterThan(0);
    expect(exitedAt - stoppedAt).toBeLessThan(EXIT_AFTER_STOPPED_MS);
  });
});
