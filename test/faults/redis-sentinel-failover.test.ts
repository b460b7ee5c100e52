// A Redis master frozen (SIGSTOP) behind Sentinel, on two real replicas: the sentinels promote its replica
// after about a second of silence; each poolscope replica finds its connection dead (a command timed out
// on it), drops it, asks the sentinels again and writes to the promoted master within seconds of the
// promotion (docs/operations.md "Failure modes"). Meanwhile no pool leaves a list that says
// `complete: true`: a replica that cannot read serves its last view as incomplete, and the promoted
// master holds every lease the frozen one had.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { PoolList } from '../../src/contract/index.js';
import { listPools, postJson } from '../support/http.js';
import { startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { randomPrefix } from '../support/redis-server.js';
import { startSentinelGroup, type SentinelGroup } from '../support/redis-sentinel.js';
import { registration } from '../support/registration.js';
import { repeatEvery, waitFor } from '../support/wait.js';

const COMMAND_TIMEOUT_MS = 500;
/** Long enough that no pool runs out while the master is frozen and heartbeats fail. */
const LEASE_SECS = 60;
const POOLS = ['pool-a', 'pool-b', 'pool-c', 'pool-d'];
/**
 * Each replica writes to the promoted master, and is healthy and complete again, within this long of the
 * promotion: the store's reconnect and re-read backoffs are capped at 2 s, whatever the outage's length.
 */
const AFTER_PROMOTION_MS = 5000;
/**
 * Sentinel's down-after: the master is promoted about 19 s into the freeze, a long outage, after which a
 * backoff that doubles towards 30 s would wait some 10 s more (it did, before the cap).
 */
const DOWN_AFTER_MS = 17_000;

let group: SentinelGroup | undefined;
let replicas: PoolscopeProcess[] = [];

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
  replicas = [];
  // Thaws the frozen master (SIGCONT) before it stops.
  await group?.stop();
  group = undefined;
});

async function writes(url: string, name: string): Promise<boolean> {
  const response = await postJson(url, registration({ name })).catch(() => undefined);
  return response?.status === 200;
}

const completeWithAll = (list: PoolList) => list.complete && POOLS.every((name) => list.pools.some((p) => p.name === name));

describe('a Redis master frozen behind Sentinel', () => {
  it('both replicas write to the promoted master, healthy and complete, within 5 s of the promotion; no pool leaves a complete list', async ({ annotate }) => {
    group = await startSentinelGroup({ downAfterMs: DOWN_AFTER_MS });
    const { url: sentinelUrl } = group;
    const prefix = randomPrefix('failover');
    const start = () =>
      startPoolscope([
        '--registration-storage=redis',
        `--redis-url=${sentinelUrl}`,
        `--redis-prefix=${prefix}`,
        `--redis-command-timeout-ms=${COMMAND_TIMEOUT_MS}`,
        `--lease-duration-secs=${LEASE_SECS}`,
        '--heartbeat-interval-secs=1',
      ]);
    replicas = await Promise.all([start(), start()]);
    const urls = replicas.map((r) => r.url);
    for (const [i, name] of POOLS.entries()) {
      await waitFor(() => writes(urls[i % urls.length]!, name), { timeoutMs: 10_000, message: `a first write of ${name}` });
    }
    for (const url of urls) await waitFor(async () => completeWithAll(await listPools(url)), { timeoutMs: 10_000, message: `all pools on ${url}` });

    // PoolRelays keep heartbeating (failures ignored), and a router polls both replicas: a complete list
    // must never lack a pool.
    let beat = 0;
    const relays = repeatEvery(500, () => Promise.all(POOLS.map((name) => writes(urls[beat++ % urls.length]!, name))));
    const dropped: string[] = [];
    const router = repeatEvery(25, () =>
      Promise.all(
        urls.map(async (url) => {
          const list = await listPools(url);
          const missing = POOLS.filter((name) => !list.pools.some((p) => p.name === name));
          if (list.complete && missing.length > 0) dropped.push(`${url} listed complete without ${missing.join(', ')}`);
        }),
      ),
    );
    try {
      // Every write the replicas took has reached the replica Sentinel will promote.
      const master = new Redis(group.master.url, { lazyConnect: true });
      try {
        expect(await master.call('WAIT', 1, 2000)).toBe(1);
      } finally {
        master.disconnect();
      }
      const frozenAt = performance.now();
      group.master.pause();
      const promotedPort = group.replica.port;
      await waitFor(async () => (await group!.masterPort()) === promotedPort, { timeoutMs: 60_000, intervalMs: 25, message: 'the promotion' });
      const promotedAt = performance.now();
      const writeAgainMs = await Promise.all(
        urls.map(async (url, i) => {
          await waitFor(() => writes(url, `after-${i}`), { timeoutMs: 60_000, intervalMs: 25, message: `a write on ${url} after the promotion` });
          return Math.round(performance.now() - promotedAt);
        }),
      );
      // /healthz and `complete` follow as soon as the store answers again, not a grown backoff later.
      const healthyAgainMs = await Promise.all(
        urls.map(async (url) => {
          await waitFor(async () => (await fetch(`${url}/healthz`)).status === 200 && completeWithAll(await listPools(url)), {
            timeoutMs: 60_000,
            intervalMs: 25,
            message: `healthy and complete again on ${url}`,
          });
          return Math.round(performance.now() - promotedAt);
        }),
      );
      await annotate(
        `promoted ${Math.round(promotedAt - frozenAt)} ms after the freeze; after the promotion the replicas wrote again after ` +
          `${writeAgainMs.join(' and ')} ms, were healthy and complete after ${healthyAgainMs.join(' and ')} ms`,
      );
      expect(dropped).toEqual([]);
      expect(Math.max(...writeAgainMs, ...healthyAgainMs)).toBeLessThan(AFTER_PROMOTION_MS);
    } finally {
      await Promise.all([relays.stop(), router.stop()]);
    }
  }, 120_000);
});
