// `npm run bench [part...]`: runs the benchmark parts one after another in one process (each
// part starts and stops its own Redis, replicas and load generators), prints a summary table, writes the
// results as JSON under bench/results/ and, for a full run, renders BENCHMARKS.md.
// `npm run bench -- --render`: renders BENCHMARKS.md again from bench/results/latest.json (after editing
// bench/report/findings.md), measuring nothing.
//   BENCH_QUICK=1        small sizes: a smoke run while developing (never rewrites BENCHMARKS.md)
//   BENCH_SKIP_BUILD=1   do not rebuild dist/ first (the replicas run the binary, which runs dist/)
//   BENCH_SOAK_MINUTES=N the soak part's length (default 30, 3 with BENCH_QUICK=1; bench/parts/soak.ts)
//   BENCH_SCALE100K_POOLS=N the scale100k part's pools (default 100,000, 5,000 with BENCH_QUICK=1)
//   BENCH_REGIONS_ONLY=big  the regions part's big-registration follow alone (bench/parts/regions-big.ts)

//   BENCH_FLEET_MINUTES=N the fleet part's measured window (default 5, half a minute with BENCH_QUICK=1)
// The etcd part needs `etcd` on the PATH (Debian: apt-get install etcd-server); without it the part says
// so and is reported as skipped. Nothing is installed by a run.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { REPO_ROOT } from '../test/support/process.js';
import { killChildrenOnExit } from './lib/children.js';
import { benchSizes } from './lib/config.js';
import { describeMachine } from './lib/machine.js';
import { convergencePart } from './parts/convergence.js';
import { etcdPart } from './parts/etcd.js';
import { fleetPart } from './parts/fleet.js';
import { heartbeatPart } from './parts/heartbeat.js';
import { lapsePart } from './parts/lapse.js';
import type { BenchPart } from './parts/part.js';
import { outagePart } from './parts/outage.js';
import { regionsPart } from './parts/regions.js';
import { scalePart } from './parts/scale.js';
import { scale100kPart } from './parts/scale100k.js';
import { soakPart } from './parts/soak.js';
import { startupPart } from './parts/startup.js';
import { watchersPart } from './parts/watchers.js';
import { renderBenchmarks } from './report/markdown.js';
import { summaryTable } from './report/table.js';
import { PART_NAMES, type BenchRun, type PartName } from './report/types.js';

const PARTS: Record<PartName, BenchPart> = {
  heartbeat: heartbeatPart,
  startup: startupPart,
  convergence: convergencePart,
  lapse: lapsePart,
  etcd: etcdPart,
  scale: scalePart,
  scale100k: scale100kPart,
  regions: regionsPart,
  outage: outagePart,
  fleet: fleetPart,
  soak: soakPart,
  watchers: watchersPart,
};

const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');
const FINDINGS_FILE = join(REPO_ROOT, 'bench', 'report', 'findings.md');

async function main(argv: string[]): Promise<number> {
  const logger = pino({ level: 'info' }, pretty({ destination: 2, sync: true, ignore: 'pid,hostname' }));
  if (argv.includes('--render')) {
    const run = JSON.parse(await readFile(join(RESULTS_DIR, 'latest.json'), 'utf8')) as BenchRun;
    await writeFile(join(REPO_ROOT, 'BENCHMARKS.md'), await markdownOf(run, 'latest'));
    logger.info('BENCHMARKS.md rendered from bench/results/latest.json');
    return 0;
  }
  const unknown = argv.filter((name) => !PART_NAMES.includes(name as PartName));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown part ${unknown.join(', ')}; parts: ${PART_NAMES.join(', ')}\n`);
    return 2;
  }
  const selected = argv.length > 0 ? PART_NAMES.filter((name) => argv.includes(name)) : PART_NAMES;
  const sizes = benchSizes();
  killChildrenOnExit();
  if (process.env.BENCH_SKIP_BUILD !== '1') {
    logger.info('building dist/ (npm run build)');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }

  const run: BenchRun = {
    startedAt: new Date().toISOString(),
    finishedAt: '',
    command: commandLine(sizes.quick, argv),
    quick: sizes.quick,
    machine: describeMachine(REPO_ROOT),
    parts: [],
    failures: [],
  };
  for (const name of selected) {
    const started = performance.now();
    const loadAverageAtStart = os.loadavg()[0]!;
    try {
      const result = await PARTS[name].run({ sizes, logger });
      run.parts.push({ ...result, durationMs: Math.round(performance.now() - started), loadAverageAtStart });
    } catch (error) {
      logger.error({ err: error }, `bench part ${name} failed`);
      run.failures.push({ part: name, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  }
  run.finishedAt = new Date().toISOString();
  run.machine.loadAverageEnd = os.loadavg()[0]!;

  process.stdout.write(`\n${summaryTable(run)}\n\n`);
  await writeResults(run, selected.length === PART_NAMES.length, logger);
  return run.failures.length === 0 ? 0 : 1;
}

/** A full run writes latest.json and BENCHMARKS.md; a quick or partial one its own files beside them. */
async function writeResults(run: BenchRun, full: boolean, logger: pino.Logger): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const name = run.quick ? 'quick' : full ? 'latest' : run.parts.map((p) => p.part).join('+') || 'failed';
  const json = join(RESULTS_DIR, `${name}.json`);
  await writeFile(json, `${JSON.stringify(run, null, 2)}\n`);
  const markdown = !run.quick && full && run.failures.length === 0 ? join(REPO_ROOT, 'BENCHMARKS.md') : join(RESULTS_DIR, `BENCHMARKS.${name}.md`);
  await writeFile(markdown, await markdownOf(run, name));
  logger.info({ json, markdown }, 'results written');
}

async function markdownOf(run: BenchRun, name: string): Promise<string> {
  const findings = existsSync(FINDINGS_FILE) ? await readFile(FINDINGS_FILE, 'utf8') : undefined;
  return renderBenchmarks(run, { resultsFile: `bench/results/${name}.json`, findings });
}

function commandLine(quick: boolean, argv: string[]): string {
  const script = process.env.npm_lifecycle_event;
  const base = script?.startsWith('bench') ? `npm run ${script}` : `node --import tsx bench/run.ts${argv.length ? ` ${argv.join(' ')}` : ''}`;
  return `${quick ? 'BENCH_QUICK=1 ' : ''}${base}`;
}

process.exitCode = await main(process.argv.slice(2));
