// Clients generated from the document by tools nobody here wrote (docs/contract.md §11): openapi-typescript
// turns GET /openapi.json into types; the README's own example (a relay's minimal registration and a
// router's GET /pools with a read token) compiles against them under `tsc --strict`, and runs against a
// replica with write and read tokens through openapi-fetch. Registrations the service refuses for a
// missing field or a wrong type do not compile. And `@redocly/cli lint` with its recommended rules finds
// nothing to say about the document.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/process.js';
import { startService, type TestService } from '../support/service.js';

const run = promisify(execFile);
const bin = (name: string) => join(REPO_ROOT, 'node_modules/.bin', name);
const WRITE = 'write.token';
const READ = 'read.token';

/** The TypeScript block after the README's `generated-client-example` marker. */
function readmeExample(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const match = /<!-- generated-client-example -->\n```ts\n([^]*?)```/.exec(readme);
  if (!match) throw new Error('README.md has no generated-client-example block');
  return match[1]!;
}

/** tsc --strict over `files` in `dir`; its diagnostics, or '' when it compiles. */
async function compile(dir: string, files: string[]): Promise<string> {
  const args = ['--ignoreConfig', '--strict', '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--skipLibCheck', 'false', ...files];
  try {
    await run(bin('tsc'), args, { cwd: dir });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

const REFUSED = `import createClient from 'openapi-fetch';
import type { paths } from './poolscope.js';
const poolscope = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' });
const minimal = { cluster_id: 'c', namespace: 'n', name: 'p', model: 'm' };
// @ts-expect-error model is required
await poolscope.POST('/pools', { body: { cluster_id: 'c', namespace: 'n', name: 'p' } });
// @ts-expect-error a capacity value is a number
await poolscope.POST('/pools', { body: { ...minimal, capacity: [{ name: 'gpus', value: '8' }] } });
// @ts-expect-error frontends are a list of URLs
await poolscope.POST('/pools', { body: { ...minimal, frontends: 'http://10.0.0.7:8000' } });
// Every optional field, each optional on its own (no default made required).
await poolscope.POST('/pools', { body: { ...minimal, capabilities: ['chat'] } });
await poolscope.POST('/pools', { body: { ...minimal, location: { zone: 'a' } } });
`;

describe('a client generated from /openapi.json', () => {
  let svc: TestService;
  let dir: string;
  /** tsc's diagnostics for both files, compiled once (tsc takes seconds to start). */
  let diagnostics: string;
  beforeAll(async () => {
    svc = await startService({ leaseMs: 60_000, authTokens: [WRITE], readTokens: [READ] });
    // Inside the repository, so the generated code finds openapi-fetch where a project of its own would.
    mkdirSync(join(REPO_ROOT, 'node_modules/.cache'), { recursive: true });
    dir = mkdtempSync(join(REPO_ROOT, 'node_modules/.cache/generated-client-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const doc = await (await fetch(`${svc.url}/openapi.json`, { headers: { authorization: `Bearer ${READ}` } })).text();
    writeFileSync(join(dir, 'openapi.json'), doc);
    await run(bin('openapi-typescript'), ['openapi.json', '-o', 'poolscope.d.ts'], { cwd: dir });
    writeFileSync(join(dir, 'example.ts'), readmeExample());
    writeFileSync(join(dir, 'refused.ts'), REFUSED);
    diagnostics = await compile(dir, ['example.ts', 'refused.ts']);
  }, 120_000);
  afterAll(() => svc?.stop());

  it("compiles the README's example under tsc --strict, and it runs against a replica with tokens", async () => {
    expect(diagnostics.split('\n').filter((line) => line.startsWith('example.ts'))).toEqual([]);
    expect(diagnostics).toBe('');
    const { stdout } = await run(bin('tsx'), ['example.ts'], {
      cwd: dir,
      env: { ...process.env, POOLSCOPE_URL: svc.url, POOLSCOPE_WRITE_TOKEN: WRITE, POOLSCOPE_READ_TOKEN: READ },
    });
    expect(stdout.split('\n')[0]).toBe('us-east-1/llm/llama-70b 20000');
    expect(stdout).toMatch(/^(true|false) \[ 'llama-70b ' \]$/m);
  }, 60_000);

  it('refuses, at compile time, a registration the service refuses for a missing field or a wrong type', () => {
    // Each refusal carries @ts-expect-error, so tsc fails on any that compiles; the optional fields compile alone.
    expect(diagnostics.split('\n').filter((line) => line.startsWith('refused.ts'))).toEqual([]);
  });
});

describe('@redocly/cli lint, recommended rules', () => {
  it('finds no problem in the document', async () => {
    const svc = await startService({ leaseMs: 60_000, socket: false });
    try {
      mkdirSync(join(REPO_ROOT, 'node_modules/.cache'), { recursive: true });
      const dir = mkdtempSync(join(REPO_ROOT, 'node_modules/.cache/redocly-'));
      writeFileSync(join(dir, 'openapi.json'), await (await svc.app.request('/openapi.json')).text());
      const result = await run(bin('redocly'), ['lint', '--extends', 'recommended', '--format', 'json', 'openapi.json'], { cwd: dir }).catch(
        (error: { stdout: string }) => error,
      );
      const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      await svc.stop();
    }
  }, 60_000);
});
