// A Redis connection that goes dead without closing (a half-open path: a blackholing NAT, a peer that
// vanished without a FIN or RST), on the real binary: every connection open at the moment is blackholed
// while new ones pass, so only a replica that drops the dead connection and opens another writes again.
// The rule (docs/design.md "The store"): a command that times out on a connection kills it; the next one
// comes within 0.1 s, and /healthz and `complete` follow as soon as the store answers again.
import { afterEach, describe, expect, it } from 'vitest';
import { listPools, postJson } from '../support/http.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';
import { metricValue } from './support.js';

const COMMAND_TIMEOUT_MS = 500;
/**
 * The bound the replica is held to, what docs/operations.md "A dead connection" promises: 2 × the command
 * timeout, one timeout to find the connection dead, the rest (a reconnect 0.1 s later, its ready check and
 * the write) for a new one; measured 0.66 to 0.75 s here, the annotation logs each run's figure.
 */
const WRITE_AGAIN_DEADLINE_MS = 2 * COMMAND_TIMEOUT_MS;
const DROPPED_LINE = 'redis connection answered nothing within the command timeout; dropping it and reconnecting';

const redis = useRedis('dead-connection');
let proxy: TcpProxy | undefined;
let replica: PoolscopeProcess | undefined;

afterEach(async () => {
  await replica?.stop('SIGKILL');
  await proxy?.close();
  replica = undefined;
  proxy = undefined;
});

/** POST /pools, bounded: a request the replica does not answer counts as a failure. */
async function writes(url: string, name: string): Promise<boolean> {
  const response = await postJson(url, registration({ name }), {}).catch(() => undefined);
  return response?.status === 200;
}

describe('a Redis connection that goes dead without closing', () => {
  it('is dropped and replaced: the replica writes again within 2 × the command timeout, then /healthz and complete recover', async ({ annotate }) => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: redis.port } });
    replica = await startPoolscope([
      '--registration-storage=redis',
      `--redis-url=redis://127.0.0.1:${proxy.port}`,
      `--redis-prefix=${redis.prefix}`,
      `--redis-command-timeout-ms=${COMMAND_TIMEOUT_MS}`,
      '--lease-duration-secs=30',
      '--heartbeat-interval-secs=5',
    ]);
    const { url } = replica;
    await waitFor(() => writes(url, 'before'), { timeoutMs: 10_000, message: 'a first write' });
    await waitFor(async () => (await fetch(`${url}/healthz`)).status === 200 && (await listPools(url)).complete, {
      timeoutMs: 10_000,
      message: 'healthy and complete',
    });
    const reconnectsBefore = await metricValue(url, 'poolscope_store_reconnects_total');

    expect(proxy.blackholeExisting()).toBeGreaterThan(0);
    const cut = performance.now();
    await waitFor(() => writes(url, 'after'), { timeoutMs: 30_000, intervalMs: 20, message: 'a write after the blackhole' });
    const writesAgainMs = Math.round(performance.now() - cut);
    // The change log's connection was blackholed too: until its own command times out, the view may still
    // say complete without the new pool (a frozen store is noticed within the command timeout), so wait
    // for the view that holds it.
    const pools = await waitFor(
      async () => {
        const list = (await fetch(`${url}/healthz`)).status === 200 && (await listPools(url));
        return list && list.complete && list.pools.some((p) => p.name === 'after') && list;
      },
      { timeoutMs: 30_000, intervalMs: 20, message: '/healthz 200 and a complete list with the new pool' },
    );
    const healthyAgainMs = Math.round(performance.now() - cut);
    expect(pools.pools.map((p) => p.name).sort()).toEqual(['after', 'before']);
    expect(await metricValue(url, 'poolscope_store_reconnects_total')).toBeGreaterThan(reconnectsBefore);
    expect(replica.logs.filter((line) => line.msg === DROPPED_LINE).length).toBeGreaterThan(0);
    // The measured figures, in the test's annotations (e.g. `--reporter=verbose`).
    await annotate(`writes again after ${writesAgainMs} ms; healthy and complete after ${healthyAgainMs} ms (command timeout ${COMMAND_TIMEOUT_MS} ms)`);
    expect(writesAgainMs).toBeLessThan(WRITE_AGAIN_DEADLINE_MS);
  });
});
