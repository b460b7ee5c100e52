// One store, one region (docs/contract.md §7): a real redis-server named four ways in one regions file
// (`127.0.0.1`, `localhost`, `/0`, `/`) is one store, refused at start with exit 2 and one line naming the
// file, the region and the one it repeats; each spelling paired with the first is refused alike in-process.
// The same server under another prefix, or another database, is another store and starts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RegionConfig, type ServeConfig } from '../../src/service/config.js';
import { startServe, StartupError } from '../../src/service/start.js';
import { silentLogger } from '../support/logs.js';
import { freePort, runPoolscope } from '../support/process.js';
import { useRegionServers } from './support.js';

const servers = useRegionServers(['r1', 'r2']);
const dir = mkdtempSync(join(tmpdir(), 'poolscope-one-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function config(regions: { name: string; redisUrl: string; prefix?: string }[]): ServeConfig {
  const filled: RegionConfig[] = regions.map((r) => ({ prefix: 'poolscope', commandTimeoutMs: 500, ...r }));
  return {
    ...DEFAULT_CONFIG,
    listen: { host: '127.0.0.1', port: 0 },
    registrationStorage: 'redis',
    region: 'r1',
    regions: filled,
    regionHoldMs: 4 * DEFAULT_CONFIG.leaseMs,
  };
}

describe('regions: one store, one region', () => {
  it('refuses a regions file naming one Redis four ways (the binary: exit 2, one line)', async () => {
    const port = servers.get('r1')!.port;
    const path = join(dir, 'four-ways.yaml');
    writeFileSync(
      path,
      `regions:
  r1: { redis_url: "redis://127.0.0.1:${port}" }
  r2: { redis_url: "redis://localhost:${port}" }
  r3: { redis_url: "redis://127.0.0.1:${port}/0" }
  r4: { redis_url: "redis://127.0.0.1:${port}/" }
`,
    );
    const result = await runPoolscope(['serve', '--region', 'r1', '--regions-file', path, '--listen', `127.0.0.1:${await freePort()}`]);
    expect(result.stderr).toMatch(/^poolscope: --regions-file: regions\.r2\.redis_url names the same store as region r1 \([^\n]*\): each region needs its own Redis or prefix\n$/);
    expect(result.code).toBe(2);
  });

  it.each(['localhost', '127.0.0.1:PORT/0', '127.0.0.1:PORT/', 'LOCALHOST:PORT/0'])('refuses %s beside 127.0.0.1', async (spelling) => {
    const port = servers.get('r1')!.port;
    const second = `redis://${spelling.includes('PORT') ? spelling.replace('PORT', String(port)) : `${spelling}:${port}`}`;
    const started = startServe(config([{ name: 'r1', redisUrl: `redis://127.0.0.1:${port}` }, { name: 'r2', redisUrl: second }]), silentLogger());
    await expect(started).rejects.toThrow(StartupError);
    await expect(started).rejects.toThrow(/^--regions-file: regions\.r2\.redis_url names the same store as region r1 /);
  });

  it.each([
    ['another prefix', (url: string) => ({ redisUrl: url, prefix: 'other' })],
    ['another database', (url: string) => ({ redisUrl: `${url}/1` })],
    ['another server', () => ({ redisUrl: servers.get('r2')!.url })],
  ])('starts with the same server under %s', async (_name, second) => {
    const url = `redis://127.0.0.1:${servers.get('r1')!.port}`;
    const handle = await startServe(config([{ name: 'r1', redisUrl: url }, { name: 'r2', ...second(url) }]), silentLogger());
    await handle.stop();
  });
});
