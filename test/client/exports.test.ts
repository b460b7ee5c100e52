// The package's entry points as a consumer sees them: `poolscope/client` and `poolscope/relay` resolve
// (package self-reference, the built dist/), export what README shows, and type-check from their .d.ts.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REPO_ROOT } from '../support/process.js';

function run(command: string, args: string[], cwd = REPO_ROOT): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd, timeout: 60_000 }, (_e, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});

describe('package exports', () => {
  const dir = (() => {
    mkdirSync(join(REPO_ROOT, 'test-artifacts'), { recursive: true });
    return mkdtempSync(join(REPO_ROOT, 'test-artifacts', 'exports-'));
  })();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('poolscope/client and poolscope/relay load from dist/ by name', async () => {
    const script = [
      "const client = await import('poolscope/client');",
      "const relay = await import('poolscope/relay');",
      'console.log(JSON.stringify({ client: Object.keys(client).sort(), relay: Object.keys(relay).sort() }));',
    ].join('\n');
    const result = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(result.stderr).toBe('');
    const names = JSON.parse(result.stdout) as { client: string[]; relay: string[] };
    expect(names.client).toEqual(expect.arrayContaining(['watchPools', 'getPools', 'PoolMap', 'poolKey']));
    expect(names.relay).toEqual(expect.arrayContaining(['startRelay', 'RegistrationError', 'readRegistrationFile']));
    // Only the entry points: internals stay private.
    const deep = await run(process.execPath, ['--input-type=module', '-e', "await import('poolscope/dist/src/cli/main.js')"]);
    expect(deep.stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  const tsc = (files: string[]) =>
    run(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--ignoreConfig', '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--skipLibCheck', ...files]);

  it("README's client examples type-check against the published types", async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const clients = readme.slice(readme.indexOf('## Clients'), readme.indexOf('\n## ', readme.indexOf('## Clients') + 1));
    // The package's own examples; the generated client's example ("Clients in other languages") is
    // compiled against its generated types by test/openapi/generated-client.test.ts.
    const examples = [...clients.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((e) => !e.includes("from 'openapi-fetch'"));
    expect(examples.map((e) => /from '(poolscope\/[a-z]+)'/.exec(e)?.[1])).toEqual(['poolscope/relay', 'poolscope/client']);
    const files = examples.map((example, i) => {
      const path = join(dir, `readme-${i}.ts`);
      writeFileSync(path, `declare const logger: import('pino').Logger;\n${example}\nexport {};\n`);
      return path;
    });
    const result = await tsc(files);
    expect(result.stdout + result.stderr).toBe('');
  });

  it('type-checks a consumer against the published types', async () => {
    const consumer = join(dir, 'consumer.ts');
    writeFileSync(
      consumer,
      [
        "import { watchPools, type PoolChange, type ListedPool } from 'poolscope/client';",
        "import { startRelay, type RelayOptions } from 'poolscope/relay';",
        "const watch = watchPools({ servers: ['http://127.0.0.1:1'] });",
        'watch.onChange((change: PoolChange) => change.key.length);',
        "const pools: ListedPool[] = watch.byModel('m');",
        "const options: RelayOptions = { servers: ['http://127.0.0.1:1'], registration: { cluster_id: 'c', namespace: 'n', name: 'x', model: 'm' } };",
        'const relay = startRelay(options);',
        'export const used = [pools, relay.status.server];',
        '// @ts-expect-error: a registration needs a model',
        "startRelay({ servers: [], registration: { cluster_id: 'c', namespace: 'n', name: 'x' } });",
        '',
      ].join('\n'),
    );
    const result = await tsc([consumer]);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
