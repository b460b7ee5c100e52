// Many real leases written fast, without an HTTP request each: the store's own heartbeat (heartbeat-6.lua
// through createRedisStore, exactly what POST /pools runs) called for every registration, a batch at a
// time on one auto-pipelined connection. Replicas read these leases like any others.
import { pino } from 'pino';
import { registrationSchema } from '../../src/contract/index.js';
import { createRedisStore } from '../../src/store/redis/index.js';

const BATCH = 2_000;

export async function writeLeases(options: {
  redisUrl: string;
  prefix: string;
  leaseSecs: number;
  registrations: readonly Record<string, unknown>[];
}): Promise<{ written: number; ms: number }> {
  const store = createRedisStore({
    url: options.redisUrl,
    prefix: options.prefix,
    leaseMs: options.leaseSecs * 1000,
    commandTimeoutMs: 30_000,
    logger: pino({ level: 'silent' }),
  });
  const started = performance.now();
  try {
    for (let i = 0; i < options.registrations.length; i += BATCH) {
      const batch = options.registrations.slice(i, i + BATCH).map((body) => registrationSchema.parse(body));
      await Promise.all(batch.map((registration) => store.heartbeat(registration)));
    }
    return { written: options.registrations.length, ms: performance.now() - started };
  } finally {
    await store.close();
  }
}
