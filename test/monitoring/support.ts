// The monitoring tests' tools: Debian's `promtool` and `prometheus` (apt package `prometheus`), the rules
// file and the dashboard as data, and the helper script (scripts/monitoring.mjs) run as a command.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { freePort, REPO_ROOT } from '../support/process.js';
import { waitFor } from '../support/wait.js';

export { REPO_ROOT };
export const RULES_FILE = join(REPO_ROOT, 'deploy/prometheus/poolscope.rules.yaml');
export const RULES_TEST_FILE = join(REPO_ROOT, 'deploy/prometheus/poolscope.rules.test.yaml');
export const DASHBOARD_FILE = join(REPO_ROOT, 'deploy/grafana/poolscope.json');

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

export const readRules = (text = readFileSync(RULES_FILE, 'utf8')): RuleFile => parse(text) as RuleFile;
export const alertsOf = (rules: RuleFile): Rule[] => rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

export interface CommandResult {
  code: number;
  output: string;
}

/** Runs a command to its end; resolves with its exit code and stdout + stderr (never rejects on a non-zero exit). */
export function run(command: string, args: string[], options: { cwd?: string } = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd ?? REPO_ROOT, timeout: 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') reject(new Error(`${command} is not installed (Debian: apt-get install -y prometheus)`));
      else if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? Number(error.code) : 0, output: `${stdout}${stderr}` });
    });
  });
}

export const promtool = (...args: string[]) => run('promtool', args);
export const monitoringScript = (...args: string[]) => run(process.execPath, ['scripts/monitoring.mjs', ...args]);

/** A scratch directory, removed by the returned function. */
export function scratchDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `poolscope-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Prometheus's HTTP API answer (`/api/v1/...`), its `data` when `status` is success. */
export async function prometheusApi<T>(base: string, path: string): Promise<T> {
  const response = await fetch(`${base}/api/v1/${path}`);
  const body = (await response.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? response.status}`);
  return body.data;
}

export interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}
export interface ApiAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
}

export const instantQuery = (base: string, query: string) =>
  prometheusApi<{ resultType: string; result: VectorSample[] }>(base, `query?query=${encodeURIComponent(query)}`);

export interface PrometheusProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * `prometheus` with `config` (YAML text) in a scratch directory (its storage too), listening on a free
 * 127.0.0.1 port; resolves once /-/ready answers 200.
 */
export async function startPrometheus(config: string, files: Record<string, string> = {}): Promise<PrometheusProcess> {
  const scratch = scratchDir('prometheus');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(scratch.dir, name), text);
  writeFileSync(join(scratch.dir, 'prometheus.yml'), config);
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [
      `--config.file=${join(scratch.dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(scratch.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (error) => {
      output += `${String(error)} (Debian: apt-get install -y prometheus)`;
      resolve();
    });
  }).then(() => void (gone = true));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    process.off('exit', killOnExit);
    scratch.remove();
  };
  try {
    const ready = await waitFor(async () => gone || ((await fetch(`${url}/-/ready`)).status === 200 && 'ready'), { timeoutMs: 20_000, message: `prometheus on ${url}` });
    if (ready !== 'ready') throw new Error('prometheus exited before it was ready');
  } catch (error) {
    child.kill('SIGKILL');
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return { url, child, output: () => output, stop };
}
