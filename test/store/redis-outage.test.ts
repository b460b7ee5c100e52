// The Redis store when Redis is frozen (SIGSTOP) or killed and restarted, on a redis-server of this
// file's own: calls fail fast with StoreUnavailableError, the watch ends, and the same store instance
// works again once Redis is back (a restart without persistence also loses the change log, which a
// follower learns as PositionLostError).
import { describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis/index.js';
import type { RegistrationStore } from '../../src/store/types.js';
import { PositionLostError, StoreUnavailableError } from '../../src/store/types.js';
import { captureLogs, silentLogger } from '../support/logs.js';
import { freePort, randomPrefix } from '../support/redis-server.js';
import { useRedis } from '../support/use-redis.js';
import { eventually, registration, WatchRecorder } from './contract-support.js';

const COMMAND_TIMEOUT_MS = 300;
/** Scheduling and event-loop slack on a busy 2-core machine. */
const SLACK_MS = 500;

const redis = useRedis('outage');

function openStore(logger = silentLogger()): RegistrationStore {
  return createRedisStore({ url: redis.url, prefix: redis.prefix, leaseMs: 60_000, commandTimeoutMs: COMMAND_TIMEOUT_MS, logger });
}

/**
 * How long `promise` took to settle from this call, and what it failed with (undefined: it did not fail).
 * Call it as the promise is made: the clock starts here.
 */
async function timed(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return { error, ms: performance.now() - started };
}

describe('redis store outages', () => {
  it('fails fast while Redis is frozen, ends the watch, and recovers when it thaws', async () => {
    const { logger, lines } = captureLogs('debug');
    const store = openStore(logger);
    const recorder = new WatchRecorder(store, (await store.snapshot()).position);
    try {
      await store.heartbeat(registration('frozen'));
      await recorder.until((events) => events.length === 1);
      redis.pause();
      // Three calls at once, each timed from when it was made (not from when the one before it settled).
      const outcomes = await Promise.all([timed(store.heartbeat(registration('frozen'))), timed(store.snapshot()), timed(store.sweep())]);
      for (const { error, ms } of outcomes) {
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + SLACK_MS);
      }
      await recorder.done;
      expect(recorder.error).toBeInstanceOf(StoreUnavailableError);
      // One line for the outage, not one per failed call (debug: the feed reading the store warns of it).
      expect(lines.filter((l) => l.msg === 'redis store is unavailable')).toEqual([expect.objectContaining({ level: 20 })]);

      redis.resume();
      await eventually(() => store.heartbeat(registration('frozen')).then(() => true, () => false), { what: 'recovery' });
      expect(lines.filter((l) => l.msg === 'redis store is available again')).toEqual([expect.objectContaining({ level: 20 })]);
      expect((await store.snapshot()).records.map((r) => r.key)).toEqual(['us-east-1/llm/frozen']);
    } finally {
      redis.resume();
      await recorder.stop();
      await store.close();
    }
  });

  it('works again after Redis is killed and restarted, without being recreated', async () => {
    const store = openStore();
    const first = await store.snapshot();
    const recorder = new WatchRecorder(store, first.position);
    try {
      await store.heartbeat(registration('before'));
      await recorder.until((events) => events.length === 1);
      const position = recorder.events[0]!.position;
      await redis.kill();

      const { error, ms } = await timed(store.heartbeat(registration('before')));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + SLACK_MS);
      await recorder.done;
      expect(recorder.error).toBeInstanceOf(StoreUnavailableError);

      await redis.restart();
      await eventually(() => store.heartbeat(registration('after')).then(() => true, () => false), {
        what: 'reconnection',
        timeoutMs: 5000,
      });
      // The restart lost every lease and the log: a follower must re-read a snapshot, not carry on.
      const stale = new WatchRecorder(store, position);
      await stale.done;
      expect(stale.error).toBeInstanceOf(PositionLostError);
      const after = await store.snapshot();
      expect(after.records.map((r) => r.key)).toEqual(['us-east-1/llm/after']);
      // The data was lost, and the snapshot says so: a new epoch, the same for every reader.
      expect(after.epoch).not.toBe(first.epoch);
      expect((await store.snapshot()).epoch).toBe(after.epoch);
    } finally {
      await recorder.stop();
      await store.close();
    }
  });

  it('tells onAvailable as soon as a new connection passes its ready check, before any command succeeds', async () => {
    const store = openStore();
    let told = 0;
    const unsubscribe = store.onAvailable!(() => {
      told += 1;
    });
    try {
      await store.heartbeat(registration('before'));
      await redis.kill();
      expect((await timed(store.heartbeat(registration('before')))).error).toBeInstanceOf(StoreUnavailableError);
      expect(told).toBe(0);
      await redis.restart();
      // No command is sent meanwhile: the reconnection alone says Redis answers again (a feed waiting
      // out its backoff re-reads then, not a round trip after its next command).
      await eventually(() => told === 1, { what: 'onAvailable after the reconnection', timeoutMs: 5000 });
      await store.heartbeat(registration('after'));
      expect(told).toBe(1);
    } finally {
      unsubscribe();
      await store.close();
    }
  });

  it('answers with StoreUnavailableError when Redis was never reachable', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const store = createRedisStore({ url, prefix: randomPrefix(), leaseMs: 1000, commandTimeoutMs: COMMAND_TIMEOUT_MS, logger: silentLogger() });
    try {
      const { error, ms } = await timed(store.heartbeat(registration('nowhere')));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + SLACK_MS);
      const watch = new WatchRecorder(store, '0-0');
      await watch.done;
      expect(watch.error).toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close();
    }
  });
});
