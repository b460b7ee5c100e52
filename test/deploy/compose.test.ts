// docker-compose.yml: Redis, three poolscope replicas and `poolscope simulate`. What each passes to the
// binary parses with the real parsers and is listed by its --help; the hosts and ports line up; and
// `docker compose config` accepts the file where the Compose client is installed.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSimulateFlags } from '../../src/cli/commands/simulate.js';
import { parseServeFlags } from '../../src/cli/flags.js';
import { flagNames, hasCommand, helpFlags, readYamlDocuments, REPO_ROOT } from './support.js';

interface Service {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
}

const [compose] = readYamlDocuments('docker-compose.yml') as { services: Record<string, Service> }[];
const services = compose!.services;
const replicas = Object.entries(services).filter(([, s]) => s.command?.[0] === 'serve');
const hasCompose = hasCommand('docker', ['compose', 'version']);

describe('docker-compose.yml', () => {
  it('has Redis, three poolscope replicas and simulate, all on the image built here', () => {
    expect(Object.keys(services).sort()).toEqual(['poolscope-1', 'poolscope-2', 'poolscope-3', 'redis', 'simulate']);
    expect(replicas).toHaveLength(3);
    // One service builds the image; every poolscope service runs it.
    const poolscope = [...replicas, ['simulate', services.simulate!] as const];
    expect(poolscope.filter(([, service]) => service.build !== undefined).map(([name, service]) => [name, service.build])).toEqual([['poolscope-1', '.']]);
    for (const [, service] of poolscope) expect(service.image).toBe('poolscope:0.1.0');
    expect(services.redis!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it.each(replicas.map(([name]) => name))('%s: serve flags parse, share one Redis service, and listen on the published port', async (name) => {
    const service = services[name]!;
    const parsed = parseServeFlags(service.command!.slice(1), service.environment ?? {});
    if (!parsed.ok) throw new Error(`${parsed.flag}: ${parsed.message}`);
    expect(parsed.config.registrationStorage).toBe('redis');
    expect(new URL(parsed.config.redisUrl!).hostname).toBe('redis');
    expect(service.depends_on?.redis).toEqual({ condition: 'service_healthy' });
    const [host, published, container] = service.ports![0]!.split(':');
    expect(host).toBe('127.0.0.1');
    expect(Number(published)).toBeGreaterThan(0);
    expect(Number(container)).toBe(parsed.config.listen.port);
    const listed = await helpFlags('serve');
    for (const flag of flagNames(service.command!)) expect(listed.has(flag), `--${flag}`).toBe(true);
    // The image's HEALTHCHECK (liveness: /livez, which a store outage never fails) follows serve's address,
    // given as the environment name it reads.
    expect(service.healthcheck).toBeUndefined();
    expect(service.environment?.POOLSCOPE_SERVE_LISTEN).toBe(`0.0.0.0:${parsed.config.listen.port}`);
  });

  it('simulate: its flags parse, and it heartbeats to each replica on the port it listens on', async () => {
    const simulate = services.simulate!;
    expect(simulate.command![0]).toBe('simulate');
    const parsed = parseSimulateFlags(simulate.command!.slice(1), {});
    if (!parsed.ok) throw new Error(`${parsed.flag}: ${parsed.message}`);
    const draft = parsed.config;
    const expected = replicas.map(([name, service]) => {
      const config = parseServeFlags(service.command!.slice(1), {});
      if (!config.ok) throw new Error(config.message);
      return `http://${name}:${config.config.listen.port}`;
    });
    expect([...draft.servers].sort()).toEqual(expected.sort());
    expect(draft.pools).toBeGreaterThan(0);
    // Router replicas beside the pools, so /debug shows both tiers.
    expect(draft.routers).toBeGreaterThan(0);
    for (const [name] of replicas) expect(simulate.depends_on?.[name]).toEqual({ condition: 'service_healthy' });
    // The image's HEALTHCHECK passes in a simulate container (test/container/image.test.ts): nothing to override.
    expect(simulate.healthcheck).toBeUndefined();
    const listed = await helpFlags('simulate');
    for (const flag of flagNames(simulate.command!)) expect(listed.has(flag), `--${flag}`).toBe(true);
  });

  it.skipIf(!hasCompose)('docker compose config accepts it', () => {
    execFileSync('docker', ['compose', '-f', join(REPO_ROOT, 'docker-compose.yml'), 'config', '--quiet'], { stdio: 'pipe' });
  });
});
