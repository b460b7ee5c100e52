// The container image, built from the Dockerfile by a real engine (scripts/build-image.sh: BuildKit, this
// machine's npm configuration as the optional `npmrc` secret) and run as deploy/deployment.yaml runs it:
// read-only root, every capability dropped, no privilege escalation, its non-root user, its memory limit.
// The image's own HEALTHCHECK (`poolscope healthcheck`) follows serve to a non-default address and to TLS;
// a relay-less simulate container is not marked unhealthy; POST and GET work against a Redis container;
// SIGTERM ends serve with exit 0 within 2 s. What a build receives and what the image holds are listed.
import { execFile } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readYamlDocuments, REPO_ROOT } from '../deploy/support.js';
import { docker, DOCKER, dockerAnswers } from '../support/docker.js';
import { listPools, postJson } from '../support/http.js';
import { startRedisContainer } from '../support/redis-container.js';
import { freePort, type PrivateRedis } from '../support/redis-server.js';
import { registration } from '../support/registration.js';
import { waitFor } from '../support/wait.js';
import { makeCertificates } from '../tls/certificates.js';

const TAG = 'poolscope:suite';
const run = promisify(execFile);

interface Deployment {
  spec: {
    template: {
      spec: {
        securityContext: { runAsUser: number; runAsGroup: number };
        containers: { name: string; resources: { limits: { memory: string } }; securityContext: Record<string, unknown> }[];
      };
    };
  };
}
const deployment = (readYamlDocuments('deploy/deployment.yaml') as Deployment[])[0]!.spec.template.spec;
const container = deployment.containers[0]!;

/** `docker run` flags for what deploy/deployment.yaml sets, read from it. */
function asDeployed(): string[] {
  const security = container.securityContext as { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean; capabilities: { drop: string[] } };
  expect(security.readOnlyRootFilesystem).toBe(true);
  expect(security.allowPrivilegeEscalation).toBe(false);
  expect(security.capabilities.drop).toEqual(['ALL']);
  const [, amount, unit] = /^(\d+)(Mi|Gi)$/.exec(container.resources.limits.memory)!;
  const memory = Number(amount) * (unit === 'Gi' ? 1024 : 1);
  return [
    '--read-only',
    '--cap-drop=ALL',
    '--security-opt=no-new-privileges',
    `--user=${deployment.securityContext.runAsUser}:${deployment.securityContext.runAsGroup}`,
    `--memory=${memory}m`,
    '--network=host',
    // The image's HEALTHCHECK command, checked often enough for a test.
    '--health-interval=1s',
    '--health-start-period=0s',
    '--health-retries=2',
  ];
}

const started: string[] = [];
async function runContainer(args: string[], command: string[]): Promise<string> {
  const id = await docker(['run', '-d', ...args, TAG, ...command]);
  started.push(id);
  return id;
}
const inspect = async (id: string, format: string) => docker(['inspect', '-f', format, id]);
const healthOf = (id: string) => inspect(id, '{{.State.Health.Status}}');

async function waitHealthy(id: string): Promise<void> {
  try {
    await waitFor(async () => (await healthOf(id)) === 'healthy', { timeoutMs: 30_000, message: `container ${id.slice(0, 12)} healthy` });
  } catch (error) {
    const logs = await docker(['logs', '--tail', '20', id]).catch(() => '');
    const health = await inspect(id, '{{json .State.Health}}').catch(() => '');
    throw new Error(`${(error as Error).message}\nhealth: ${health.slice(0, 2000)}\nlogs: ${logs}`);
  }
}

/** SIGTERM, then the exit code and how long the container took to exit. */
async function terminate(id: string): Promise<{ code: number; ms: number }> {
  const begun = performance.now();
  await docker(['kill', '--signal=TERM', id]);
  const code = Number(await docker(['wait', id], { timeoutMs: 30_000 }));
  return { code, ms: performance.now() - begun };
}

describe.skipIf(!dockerAnswers)('the container image', () => {
  beforeAll(async () => {
    await run('bash', ['scripts/build-image.sh', TAG], { cwd: REPO_ROOT, timeout: 900_000, maxBuffer: 64 * 1024 * 1024 });
  }, 900_000);
  afterAll(async () => {
    for (const id of started) await docker(['rm', '-f', id]).catch(() => '');
  });

  it('a build receives only what the Dockerfile copies (.dockerignore)', async () => {
    const probe = ['FROM node:20-bookworm-slim', 'COPY . /context', 'RUN cd /context && find . -mindepth 1 | sed "s/^/CONTEXT /"'].join('\n');
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) => {
      const child = execFile(DOCKER, ['build', '--no-cache', '--network=host', '-f-', '.'], { cwd: REPO_ROOT, env: { ...process.env, DOCKER_BUILDKIT: '0' }, maxBuffer: 64 * 1024 * 1024 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve({ stdout: out }),
      );
      child.stdin!.end(probe);
    });
    const context = stdout.split('\n').filter((l) => l.startsWith('CONTEXT ./')).map((l) => l.slice('CONTEXT ./'.length));
    const top = [...new Set(context.map((p) => p.split('/')[0]!))].sort();
    expect(top).toEqual(['.npmrc', 'bin', 'machines', 'npm-shrinkwrap.json', 'package.json', 'scripts', 'src', 'tsconfig.build.json', 'tsconfig.json']);
    expect(context.filter((p) => p.startsWith('scripts/')).sort()).toEqual(['scripts/build-debug-page.mjs', 'scripts/bundle.mjs', 'scripts/copy-assets.mjs']);
    // Every file under src/ is there, and nothing more.
    const srcFiles = (dir: string): string[] =>
      readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [`${dir}/${e.name}`, ...srcFiles(`${dir}/${e.name}`)] : [`${dir}/${e.name}`]));
    expect(context.filter((p) => p.startsWith('src/')).sort()).toEqual(srcFiles('src').sort());
  });

  it('holds production dependencies, dist/ without typings or source maps, and runs as its non-root user', async () => {
    const listing = await docker([
      'run', '--rm', '--network=host', '--entrypoint=sh', TAG, '-c',
      'id -u; id -g; echo ---; ls node_modules; echo ---; find dist -name "*.d.ts" -o -name "*.map"; echo ---; ls -A',
    ]);
    const [ids, modules, typings, top] = listing.split('---').map((part) => part.trim());
    expect(ids!.split('\n')).toEqual([String(deployment.securityContext.runAsUser), String(deployment.securityContext.runAsGroup)]);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const installed = new Set(modules!.split('\n'));
    for (const name of Object.keys(pkg.dependencies)) expect(installed.has(name.split('/')[0]!), name).toBe(true);
    for (const name of Object.keys(pkg.devDependencies)) {
      if (name.startsWith('@')) continue; // a scope may hold production packages too
      expect(installed.has(name), name).toBe(false);
    }
    expect(typings).toBe('');
    expect(top!.split('\n').sort()).toEqual(['bin', 'dist', 'node_modules', 'package.json']);
  });

  it('serves on a non-default address given as serve\'s environment, turns healthy by its own HEALTHCHECK, and exits 0 within 2 s of SIGTERM', async () => {
    const port = await freePort();
    const id = await runContainer([...asDeployed(), '-e', `POOLSCOPE_SERVE_LISTEN=127.0.0.1:${port}`], ['serve']);
    await waitHealthy(id);
    for (const path of ['/livez', '/healthz']) expect((await fetch(`http://127.0.0.1:${port}${path}`)).status, path).toBe(200);
    const { code, ms } = await terminate(id);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2000);
  });

  it('over TLS: healthy through the healthcheck, which checks the certificate serve presents', async () => {
    const certificates = makeCertificates();
    try {
      // The container's user reads the files through a read-only mount.
      chmodSync(certificates.dir, 0o755);
      for (const file of [certificates.server.cert, certificates.server.key, certificates.ca]) chmodSync(file, 0o644);
      const port = await freePort();
      const id = await runContainer(
        [
          ...asDeployed(),
          `--volume=${certificates.dir}:/tls:ro`,
          '-e', `POOLSCOPE_SERVE_LISTEN=127.0.0.1:${port}`,
          '-e', 'POOLSCOPE_SERVE_TLS_CERT_PATH=/tls/server.crt',
          '-e', 'POOLSCOPE_SERVE_TLS_KEY_PATH=/tls/server.key',
        ],
        ['serve'],
      );
      await waitHealthy(id);
      const probe = await inspect(id, '{{json .State.Health.Log}}');
      expect(probe).toContain('"ExitCode":0');
      // The host reaches it over HTTPS with the CA (curl: this process's fetch trusts no test CA).
      const { stdout } = await run('curl', ['-sS', '--cacert', certificates.ca, `https://127.0.0.1:${port}/livez`]);
      expect(JSON.parse(stdout)).toEqual({ status: 'ok' });
      expect((await terminate(id)).code).toBe(0);
    } finally {
      certificates.cleanup();
    }
  });

  describe('with Redis in a container', () => {
    let redis: PrivateRedis;
    beforeAll(async () => {
      redis = await startRedisContainer();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('registers and lists a pool, a simulate container beside it is not unhealthy, and serve exits 0 within 2 s of SIGTERM', async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const id = await runContainer(
        [...asDeployed(), '-e', `POOLSCOPE_SERVE_LISTEN=127.0.0.1:${port}`],
        ['serve', '--registration-storage=redis', `--redis-url=${redis.url}`, '--redis-prefix=image-test'],
      );
      await waitHealthy(id);
      expect((await postJson(url, registration({ name: 'from-test' }))).status).toBe(200);
      expect((await listPools(url)).pools.map((p) => p.name)).toContain('from-test');
      // simulate serves nothing: the image's HEALTHCHECK passes while it runs rather than failing on :8080.
      const simulate = await runContainer(asDeployed(), ['simulate', `--servers=${url}`, '--pools=3']);
      await waitHealthy(simulate);
      await waitFor(async () => (await listPools(url)).pools.length >= 4, { timeoutMs: 15_000, message: 'the simulated pools listed' });
      expect((await terminate(simulate)).code).toBe(0);
      const { code, ms } = await terminate(id);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(2000);
    });
  });
});
