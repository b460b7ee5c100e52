// `poolscope relay` as the binary: a bad registration (file or flags) is refused at start, exit 2, with
// one stderr line naming the flag or the file's field; a good one registers, logs pino lines, and stops
// with exit 0 on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { envName } from '../../src/cli/env-names.js';
import { RELAY_FLAGS } from '../../src/cli/commands/relay-flags.js';
import { listPools } from '../support/http.js';
import { checkLogStream, environmentWithoutPoolscope, REPO_ROOT, runPoolscope } from '../support/process.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const bin = join(REPO_ROOT, 'bin', 'poolscope.js');
const dir = mkdtempSync(join(tmpdir(), 'poolscope-relay-cli-'));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const GOOD_YAML = `cluster_id: us-east-1
namespace: llm
name: from-yaml
model: meta-llama/Llama-3.1-70B-Instruct
capabilities: [chat]
capacity:
  - name: gpus
    value: 8
frontends: [http://10.0.0.7:8000]
`;

const run = (args: string[], env: Record<string, string> = {}) => runPoolscope(args, { env });

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOWHERE = ['--servers', 'http://127.0.0.1:1'];

const REFUSALS: { name: string; args: () => string[]; env?: Record<string, string>; line: RegExp }[] = [
  {
    name: 'an unknown key in a JSON file',
    args: () => ['--registration-file', file('extra.json', JSON.stringify({ cluster_id: 'c', namespace: 'n', name: 'x', model: 'm', gpus: 8 }))],
    line: /^poolscope: --registration-file: ".*extra\.json": gpus: unknown field$/,
  },
  {
    name: 'a capacity value that is no number in a YAML file',
    args: () => ['--registration-file', file('capacity.yaml', GOOD_YAML.replace('value: 8', 'value: eight'))],
    line: /^poolscope: --registration-file: ".*capacity\.yaml": capacity\.0\.value: /,
  },
  {
    name: 'a cluster id that is no DNS name',
    args: () => ['--registration-file', file('cluster.yaml', GOOD_YAML.replace('us-east-1', 'US_East'))],
    line: /^poolscope: --registration-file: ".*cluster\.yaml": cluster_id: must be a DNS-1123/,
  },
  {
    name: 'an unknown key under location',
    args: () => ['--registration-file', file('location.yaml', `${GOOD_YAML}location: {region: r, city: x}\n`)],
    line: /^poolscope: --registration-file: ".*location\.yaml": location\.city: unknown field$/,
  },
  {
    name: 'a missing model, named as the flag to give',
    args: () => ['--registration-file', file('nomodel.yaml', GOOD_YAML.replace(/^model:.*\n/m, ''))],
    line: /^poolscope: --model: model: required \(give --model or "model" in --registration-file\)$/,
  },
  {
    name: 'YAML that does not parse',
    args: () => ['--registration-file', file('broken.yaml', 'cluster_id: [unclosed\n')],
    line: /^poolscope: --registration-file: ".*broken\.yaml" is not valid YAML: /,
  },
  {
    name: 'JSON that does not parse',
    args: () => ['--registration-file', file('broken.json', '{"cluster_id": ')],
    line: /^poolscope: --registration-file: ".*broken\.json" is not valid JSON: /,
  },
  { name: 'an empty file', args: () => ['--registration-file', file('empty.yaml', '\n')], line: /is empty$/ },
  { name: 'a list, not a mapping', args: () => ['--registration-file', file('list.yaml', '- a\n- b\n')], line: /must hold one object/ },
  { name: 'a missing file', args: () => ['--registration-file', join(dir, 'missing.yaml')], line: /^poolscope: --registration-file: cannot read ".*missing\.yaml" \(ENOENT\)$/ },
  {
    name: 'a capacity flag without a number',
    args: () => ['--registration-file', file('ok1.yaml', GOOD_YAML), '--capacity', 'gpus=eight'],
    line: /^poolscope: --capacity: capacity\.0\.value: /,
  },
  {
    name: 'a flag overriding the file with a bad value',
    args: () => ['--registration-file', file('ok2.yaml', GOOD_YAML), '--cluster-id', 'Bad_Id'],
    line: /^poolscope: --cluster-id: cluster_id: must be a DNS-1123/,
  },
  {
    name: 'flags alone, without a name',
    args: () => ['--cluster-id', 'c', '--namespace', 'n', '--model', 'm'],
    line: /^poolscope: --name: name: required \(give --name\)$/,
  },
  { name: 'a bad zone flag', args: () => ['--registration-file', file('ok3.yaml', GOOD_YAML), '--zone', 'z'.repeat(300)], line: /^poolscope: --zone: location\.zone: / },
  { name: 'an empty namespace from env', args: () => ['--registration-file', file('ok4.yaml', GOOD_YAML)], env: { POOLSCOPE_RELAY_NAMESPACE: '' }, line: /^poolscope: --namespace: must not be empty \(from POOLSCOPE_RELAY_NAMESPACE\)$/ },
  { name: 'a server that is no http URL', args: () => ['--servers', 'ftp://x', '--registration-file', file('ok5.yaml', GOOD_YAML)], line: /^poolscope: --servers: "ftp:\/\/x" must be an http/ },
  { name: 'a missing token file', args: () => ['--token-file', join(dir, 'nope'), '--registration-file', file('ok6.yaml', GOOD_YAML)], line: /^poolscope: --token-file: cannot read/ },
  { name: 'a CA file that holds no certificate', args: () => ['--ca-file', file('ca.pem', 'hello'), '--registration-file', file('ok7.yaml', GOOD_YAML)], line: /^poolscope: --ca-file: ".*ca\.pem" holds no PEM certificate$/ },
  { name: 'an unknown flag', args: () => ['--nope'], line: /^poolscope: --nope: unknown flag \(poolscope relay --help lists the flags\)$/ },
];

describe('poolscope relay refuses a bad registration at start', () => {
  it.each(REFUSALS)('$name', async ({ args, env, line }) => {
    const given = args();
    const result = await run(['relay', ...(given.includes('--servers') ? [] : NOWHERE), ...given], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^[^\n]*\n$/);
    expect(result.stderr.trimEnd()).toMatch(line);
  });
});

describe('poolscope relay', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService({ heartbeatIntervalMs: 200, leaseMs: 2000 });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('--help lists every flag with its env variable', async () => {
    const result = await run(['relay', '--help']);
    expect(result.code).toBe(0);
    for (const spec of RELAY_FLAGS) {
      expect(result.stdout).toContain(`--${spec.name} `);
      expect(result.stdout).toContain(envName('relay', spec));
    }
  });

  it('registers from a YAML file with a flag and an env variable on top, logs pino lines, and exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'relay', '--servers', `${service.url}/`, '--registration-file', file('good.yaml', GOOD_YAML), '--capacity', 'gpus=16'],
      { cwd: REPO_ROOT, env: { ...environmentWithoutPoolscope(), POOLSCOPE_RELAY_NAME: 'from-env' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    checkLogStream(child.stdout, 'poolscope relay stdout');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const pool = await waitFor(async () => (await listPools(service.url)).pools.find((p) => p.name === 'from-env'), { timeoutMs: 10_000 });
      expect(pool).toMatchObject({ cluster_id: 'us-east-1', namespace: 'llm', capacity: [{ name: 'gpus', value: 16 }], capabilities: ['chat'] });
      await waitFor(() => stdout.includes('"msg":"registered"'));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.find((l) => l.msg === 'registered')).toMatchObject({ pool: 'us-east-1/llm/from-env', heartbeat_interval_ms: 200 });
      expect(lines.at(-1)).toMatchObject({ msg: 'relay stopped' });
      expect(stderr).toBe('');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
