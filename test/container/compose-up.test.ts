// docker-compose.yml brought up for real by the one Compose client Debian ships (docker-compose 1.29), on
// a host-network rendering of it: the same services, commands and dependencies, with each service on
// the host network at a free loopback port (the engine has no bridge) and what v1 does not read left out
// (`name:`; the image is the one the suite built, so nothing builds). The simulator's pools are then
// listed through each replica.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSimulateFlags } from '../../src/cli/commands/simulate.js';
import { hasCommand, readYamlDocuments, REPO_ROOT } from '../deploy/support.js';
import { dockerAnswers, REDIS_IMAGE } from '../support/docker.js';
import { listPools } from '../support/http.js';
import { freePort } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const TAG = 'poolscope:suite';
const run = promisify(execFile);
const hasV1 = hasCommand('docker-compose', ['version']);

interface Service {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: Record<string, unknown>;
  network_mode?: string;
  [key: string]: unknown;
}

describe.skipIf(!dockerAnswers || !hasV1)('docker-compose.yml brought up by docker-compose 1.29 (host network)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poolscope-compose-'));
  const project = `poolscope-suite-${process.pid}`;
  const file = join(dir, 'docker-compose.host.yml');
  const replicaUrls: Record<string, string> = {};
  let pools = 0;
  const compose = (...args: string[]) =>
    run('docker-compose', ['-p', project, '-f', file, ...args], { cwd: dir, timeout: 300_000, env: { ...process.env, DOCKER_HOST: process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock' } });

  beforeAll(async () => {
    await run('bash', ['scripts/build-image.sh', TAG], { cwd: REPO_ROOT, timeout: 900_000, maxBuffer: 64 * 1024 * 1024 });
    const [source] = readYamlDocuments('docker-compose.yml') as { name?: string; services: Record<string, Service> }[];
    const services = structuredClone(source!.services);
    const redisPort = await freePort();
    const ports: Record<string, number> = {};
    for (const [name, service] of Object.entries(services)) if (service.command?.[0] === 'serve') ports[name] = await freePort();
    for (const [name, service] of Object.entries(services)) {
      delete service.build;
      delete service.ports;
      service.network_mode = 'host';
      if (name === 'redis') {
        service.image = REDIS_IMAGE;
        service.command = [...service.command!, '--port', String(redisPort), '--bind', '127.0.0.1'];
        service.healthcheck = { ...service.healthcheck, test: ['CMD', 'redis-cli', '-p', String(redisPort), 'ping'] };
        continue;
      }
      service.image = TAG;
      service.command = service.command!.map((arg) => arg.replace('redis://redis:6379', `redis://127.0.0.1:${redisPort}`));
      if (ports[name] !== undefined) {
        service.environment = { ...service.environment, POOLSCOPE_SERVE_LISTEN: `127.0.0.1:${ports[name]}` };
        replicaUrls[name] = `http://127.0.0.1:${ports[name]}`;
        // The image's HEALTHCHECK, checked often enough for a test.
        service.healthcheck = { interval: '1s', retries: 30 };
      }
    }
    const simulate = services.simulate!;
    simulate.command = simulate.command!.map((arg) =>
      arg.startsWith('--servers=') ? `--servers=${Object.values(replicaUrls).join(',')}` : arg,
    );
    const parsed = parseSimulateFlags(simulate.command.slice(1), {});
    if (!parsed.ok) throw new Error(parsed.message);
    pools = parsed.config.pools;
    // JSON, which the v1 client's YAML 1.1 reads as written (YAML's plain `no` would be false there).
    writeFileSync(file, JSON.stringify({ services }, null, 2));
    await compose('up', '-d');
  }, 900_000);

  afterAll(async () => {
    await compose('down', '--timeout', '5').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists the simulator's pools through each replica", async () => {
    expect(Object.keys(replicaUrls)).toHaveLength(3);
    expect(pools).toBeGreaterThan(0);
    for (const [name, url] of Object.entries(replicaUrls)) {
      // Churn stops and restarts some pools: most of them are listed at any moment, never more than all.
      await waitFor(async () => (await listPools(url)).pools.length >= pools / 2, { timeoutMs: 60_000, message: `${name} lists the simulated pools` });
      const listed = (await listPools(url)).pools;
      expect(listed.length, name).toBeLessThanOrEqual(pools);
    }
    const { stdout } = await compose('ps');
    expect(stdout).toMatch(/healthy/);
    expect(stdout).not.toMatch(/unhealthy/);
  });
});
