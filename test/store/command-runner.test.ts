// A dead connection is noticed by whichever bound runs out first: the runner's command timeout
// (dropIfSilent) or ioredis's socket timeout (connection.ts `socketTimeoutMs`, the same length in the
// store). Either way the operator reads the one warning docs/operations.md names for it, once per
// connection, and the next command goes over a new connection.
import { afterEach, describe, expect, it } from 'vitest';
import { CommandRunner } from '../../src/store/redis/command-runner.js';
import { openRedisClient, type RedisClient } from '../../src/store/redis/connection.js';
import { parseRedisUrl } from '../../src/store/redis/url.js';
import { captureLogs } from '../support/logs.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';

const DROPPED_LINE = 'redis connection answered nothing within the command timeout; dropping it and reconnecting';
const redis = useRedis('command-runner');
let proxy: TcpProxy | undefined;
let client: RedisClient | undefined;

afterEach(async () => {
  client?.disconnect();
  await proxy?.close();
  client = undefined;
  proxy = undefined;
});

async function runnerThroughProxy(bounds: { commandTimeoutMs: number; socketTimeoutMs: number }) {
  proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: redis.port } });
  const logs = captureLogs('debug');
  client = openRedisClient({
    target: parseRedisUrl(`redis://127.0.0.1:${proxy.port}`),
    commandTimeoutMs: bounds.commandTimeoutMs,
    socketTimeoutMs: bounds.socketTimeoutMs,
    ioredisCommandTimeout: false,
    reconnect: true,
    connectionName: 'poolscope-test-runner',
  });
  client.on('error', () => {});
  const runner = new CommandRunner({ client, commandTimeoutMs: bounds.commandTimeoutMs, logger: logs.logger, description: 'redis://test' });
  await runner.run('PING', (c) => c.ping());
  return { runner, logs, proxy };
}

describe('a connection that goes dead without closing', () => {
  it.each([
    ['the command timeout runs out first', { commandTimeoutMs: 300, socketTimeoutMs: 2000 }],
    ["ioredis's socket timeout runs out first", { commandTimeoutMs: 2000, socketTimeoutMs: 300 }],
  ])('is logged once, with its fields, and replaced (%s)', async (_, bounds) => {
    const { runner, logs, proxy: path } = await runnerThroughProxy(bounds);
    expect(path.blackholeExisting()).toBe(1);
    await expect(runner.run('SET k', (c) => c.set(`${redis.prefix}:k`, 'v'))).rejects.toThrow(/redis store: SET k failed/);
    await waitFor(async () => (await runner.run('GET k', (c) => c.get(`${redis.prefix}:k`)).catch(() => 'failed')) !== 'failed', {
      timeoutMs: 5000,
      message: 'a command over a new connection',
    });
    const dropped = logs.warnings().filter((line) => line.msg === DROPPED_LINE);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({ redis: 'redis://test', command: 'SET k', timeout_ms: bounds.commandTimeoutMs });
  });
});
