#!/usr/bin/env node
// `npm run mutation [-- PART...] [--full | --merge-only] [--option=value...]`: StrykerJS over each part of
// scripts/mutation-parts.mjs (machines, contract, kube, join, http-auth, http, http-document, store and
// http-streams in turn, relay, client, then routers beside them, by default; a part marked unproven only
// when named), each against its own unit tests, then one report of them all: reports/mutation/mutation.json
// and mutation.html beside it. Exits 1 when a part's run fails, when the whole (every part's mutants together) scores
// below THRESHOLDS.break, or when any one file scores below THRESHOLDS.file.
//
// Incremental against a committed baseline: mutation-baseline/<part>.json is the part's last result, made
// by a full run (`--full`: every mutant, the file written anew) and committed with the code it judged. Every
// other run, CI's too, retests the mutants whose code changed or whose killing test changed (a survivor,
// when a test was added) and reuses the rest; it writes the file back, for the change to commit. A run that
// narrows `--mutate` reads a copy and writes the copy (reports/mutation/<part>/incremental.json), so it
// never shrinks the baseline to its few files. See README "Development".
import { spawn } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PARTS, MUTATION_PARTS, PART_NAMES, THRESHOLDS } from './mutation-parts.mjs';
import { keepUnchanged, readBaseline } from './mutation-baseline.mjs';
import { recordUnseen, UNSEEN_RECORD, unseenChanges, unseenInputs } from './mutation-unseen.mjs';

const BREAK = THRESHOLDS.break;
const FILE_BREAK = THRESHOLDS.file;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
// The report libraries StrykerJS itself uses, resolved from its own package so they are its versions.
const fromStryker = createRequire(require.resolve('@stryker-mutator/core'));

const args = process.argv.slice(2);
const full = args.includes('--full');
// Merge the parts' last reports (reports/mutation/<part>/mutation.json) without running StrykerJS.
const mergeOnly = args.includes('--merge-only');
const named = args.filter((arg) => !arg.startsWith('--'));
// Any other `--option=value` goes to StrykerJS, e.g. `--concurrency=1` on a busy machine.
const passed = args.filter((arg) => arg.startsWith('--') && arg !== '--full' && arg !== '--merge-only');
// A run that narrows the mutants to some files judges them on a copy of the baseline (runPart).
const narrowed = passed.some((arg) => arg.startsWith('--mutate'));
const unknown = named.filter((name) => !(name in MUTATION_PARTS));
if (unknown.length > 0) {
  process.stderr.write(`mutation: unknown part ${unknown.join(', ')} (parts: ${PART_NAMES.join(', ')})\n`);
  process.exit(2);
}
const parts = named.length > 0 ? named : DEFAULT_PARTS;
for (const name of PART_NAMES.filter((part) => !parts.includes(part) && MUTATION_PARTS[part].unproven !== undefined)) {
  process.stdout.write(`mutation: part ${name} not run by default: ${MUTATION_PARTS[name].unproven} (npm run mutation -- ${name})\n`);
}

/**
 * One StrykerJS run of a part. `beside`: the part runs while others do, on the test runners it names
 * (`concurrency`, else one), its output prefixed with its name so the two runs' lines can be told apart.
 */
async function runPart(name, { beside = false } = {}) {
  const strykerBin = `${repoRoot}node_modules/@stryker-mutator/core/bin/stryker.js`;
  const strykerArgs = ['run', 'stryker.config.mjs', '--incremental', ...(full ? ['--force'] : []), ...(beside ? [`--concurrency=${MUTATION_PARTS[name].concurrency ?? 1}`] : []), ...passed];
  const env = { ...process.env, POOLSCOPE_MUTATION_PART: name, POOLSCOPE_MUTATION_WHOLE: '1', POOLSCOPE_SKIP_BUILD: '1' };
  if (narrowed) {
    const copy = `reports/mutation/${name}/incremental.json`;
    await mkdir(`${repoRoot}reports/mutation/${name}`, { recursive: true });
    await copyFile(`${repoRoot}mutation-baseline/${name}.json`, `${repoRoot}${copy}`).catch(() => undefined);
    env.POOLSCOPE_MUTATION_INCREMENTAL_FILE = copy;
  }
  // A run that judged every mutant as the baseline did leaves its bytes as they were (scripts/mutation-baseline.mjs).
  const baseline = `${repoRoot}mutation-baseline/${name}.json`;
  const before = narrowed ? undefined : await readBaseline(baseline);
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [strykerBin, ...strykerArgs], {
      cwd: repoRoot,
      stdio: beside ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env,
    });
    if (beside) {
      for (const [from, to] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ]) {
        createInterface({ input: from }).on('line', (line) => to.write(`[${name}] ${line}\n`));
      }
    }
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal === null ? 1 : 128)));
  });
  if (await keepUnchanged(baseline, before)) process.stdout.write(`mutation: part ${name}: every result as in mutation-baseline/${name}.json, whose bytes are kept\n`);
  return code;
}

async function timedRun(name, options) {
  const started = Date.now();
  process.stdout.write(`\nmutation: part ${name} (${full ? 'every mutant' : `incremental, against mutation-baseline/${name}.json`}${options?.beside ? `, beside the others on ${MUTATION_PARTS[name].concurrency ?? 1} test runner(s)` : ''})\n`);
  const code = await runPart(name, options);
  return { name, code, seconds: Math.round((Date.now() - started) / 1000) };
}

const outcomes = [];
if (mergeOnly) {
  for (const name of parts) outcomes.push({ name, code: 0, seconds: 0 });
} else {
  // Parts marked `beside` (their tests mostly wait on real timers) run one after another in a lane of their
  // own while the others run in turn, when there are others: CI's time is then about that of the longer
  // lane. One at a time, so the waiting parts never stack their runners on the cores the others need.
  const inTurn = parts.filter((name) => MUTATION_PARTS[name].beside !== true);
  const besideParts = inTurn.length > 0 ? parts.filter((name) => MUTATION_PARTS[name].beside === true) : [];
  const alongside = (async () => {
    const lane = [];
    for (const name of besideParts) lane.push(await timedRun(name, { beside: true }));
    return lane;
  })();
  for (const name of parts.filter((part) => !besideParts.includes(part))) outcomes.push(await timedRun(name));
  outcomes.push(...(await alongside));
}

// The inputs StrykerJS's diff does not see (scripts/mutation-unseen.mjs): a full run records them with its
// baselines; any other run names those changed since, as its reused results were judged with the old ones.
const unseenNow = await unseenInputs(repoRoot);
const unseen = mergeOnly ? {} : full && !narrowed ? {} : await unseenChanges(repoRoot, parts, unseenNow);
if (full && !narrowed && !mergeOnly) await recordUnseen(repoRoot, outcomes.filter(({ code }) => code === 0).map(({ name }) => name), unseenNow);

// One report of every part run now: each part's files under one root.
const merged = { schemaVersion: '2', thresholds: { high: THRESHOLDS.high, low: THRESHOLDS.low }, files: {}, projectRoot: repoRoot };
for (const { name } of outcomes) {
  let report;
  try {
    report = JSON.parse(await readFile(`${repoRoot}reports/mutation/${name}/mutation.json`, 'utf8'));
  } catch {
    continue;
  }
  // A route file is mutated by two parts (its handlers, its operation declarations: scripts/mutation-parts.mjs),
  // so its mutants are the union of both; each part numbers its own from 0, hence the part in each id.
  for (const [path, file] of Object.entries(report.files)) {
    const mutants = file.mutants.map((mutant) => ({ ...mutant, id: `${name}:${mutant.id}` }));
    const seen = merged.files[path];
    merged.files[path] = seen === undefined ? { ...file, mutants } : { ...seen, mutants: [...seen.mutants, ...mutants] };
  }
  if (report.testFiles !== undefined) merged.testFiles = { ...merged.testFiles, ...report.testFiles };
}

const { calculateMetrics } = await import(fromStryker.resolve('mutation-testing-metrics'));
const metrics = calculateMetrics(merged.files);
const score = metrics.metrics.mutationScore;
await mkdir(`${repoRoot}reports/mutation`, { recursive: true });
await writeFile(`${repoRoot}reports/mutation/mutation.json`, JSON.stringify(merged));
await writeFile(`${repoRoot}reports/mutation/mutation.html`, await reportHtml(merged));

const rows = [];
const walk = (node, path) => {
  for (const child of node.childResults) {
    const childPath = path === '' ? child.name : `${path}/${child.name}`;
    if (child.file !== undefined) rows.push([childPath, child.metrics]);
    else walk(child, childPath);
  }
};
walk(metrics, '');
process.stdout.write('\nmutation: score per file (killed + timed out, of the valid mutants)\n');
for (const [path, m] of rows) {
  const undetected = m.survived + m.noCoverage;
  process.stdout.write(`${m.mutationScore.toFixed(1).padStart(6)} %  ${String(m.totalValid).padStart(4)} mutants  ${String(undetected).padStart(3)} undetected  ${path}\n`);
}
for (const { name, code, seconds } of outcomes) {
  process.stdout.write(`mutation: part ${name}: ${code === 0 ? 'passed' : `failed (exit ${code})`} in ${seconds} s\n`);
}
for (const [name, paths] of Object.entries(unseen)) {
  const what = paths === null ? `no full run recorded in ${UNSEEN_RECORD}` : `changed since its baseline's full run, unseen by StrykerJS's diff: ${paths.join(', ')}`;
  process.stdout.write(`mutation: part ${name}: ${what}; its reused results may be stale (npm run mutation -- --full ${name})\n`);
}
// A file without a valid mutant (all of it ignored or equivalent) has no score to judge.
const weak = rows.filter(([, m]) => m.totalValid > 0 && !(m.mutationScore >= FILE_BREAK));
for (const [path, m] of weak) process.stdout.write(`mutation: ${path} scores ${m.mutationScore.toFixed(1)} %, below ${FILE_BREAK} % for any one file\n`);
process.stdout.write(
  `mutation: ${score.toFixed(2)} % of ${metrics.metrics.totalValid} mutants (break at ${BREAK} %, and at ${FILE_BREAK} % for any one file); reports/mutation/mutation.html\n`,
);
process.exit(outcomes.some(({ code }) => code !== 0) || !(score >= BREAK) || weak.length > 0 ? 1 : 0);

/** The HTML page StrykerJS's html reporter writes, for the merged report. */
async function reportHtml(report) {
  const elements = await readFile(fromStryker.resolve('mutation-testing-elements/dist/mutation-test-elements.js'), 'utf8');
  const json = JSON.stringify(report).replace(/</g, '<"+"');
  return `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>poolscope mutation testing</title><script>${elements}</script></head>
<body>
<mutation-test-report-app titlePostfix="poolscope"></mutation-test-report-app>
<script>
  const app = document.querySelector('mutation-test-report-app');
  app.report = ${json};
  const updateTheme = () => { document.body.style.backgroundColor = app.themeBackgroundColor; };
  app.addEventListener('theme-changed', updateTheme);
  updateTheme();
</script>
</body>
</html>
`;
}
