// The dashboard on live data: two regions (a redis-server and a replica each), `poolscope simulate`
// heartbeating pools with churn into both, watch streams open, refused heartbeats, and one region's Redis
// frozen past the hold, all scraped by a real Prometheus every second. Every panel of
// deploy/grafana/poolscope.json is queried over that window through Prometheus's query_range API and must
// show data; the events show where they belong. The panels are drawn (dashboard-render.ts) and screenshotted in headless Chromium: `npm run
// monitoring:screenshot` writes docs/monitoring.png, a plain test run test-artifacts/monitoring-dashboard.png.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { launchChromium } from '../debug/support/chromium.js';
import { postJson } from '../support/http.js';
import { checkLogStream, REPO_ROOT, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { renderDashboard, legendOf, type Panel, type Series } from './dashboard-render.js';
import { DASHBOARD_FILE, instantQuery, prometheusApi, RULES_FILE, scratchDir, startPrometheus, type PrometheusProcess } from './support.js';

const OUTPUT = process.env.POOLSCOPE_SCREENSHOT_TO
  ? resolve(REPO_ROOT, process.env.POOLSCOPE_SCREENSHOT_TO)
  : join(REPO_ROOT, 'test-artifacts', 'monitoring-dashboard.png');
const REGIONS = ['us-east-1', 'eu-west-1'] as const;
/** Scraped every second, so a 10 s window holds enough samples for rate(). */
const VARIABLES: Record<string, string> = { __rate_interval: '10s', __interval: '1s', __range: '1m', instance: '.+' };

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { title: string; panels: Panel[] };
const substitute = (expr: string) =>
  expr.replace(/\$\{?(\w+)\}?/g, (_, name: string) => {
    if (!(name in VARIABLES)) throw new Error(`unknown variable $${name}`);
    return VARIABLES[name]!;
  });
const until = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('the dashboard on two live regions', () => {
  const scratch = scratchDir('dashboard-live');
  const redis: PrivateRedis[] = [];
  const replicas: PoolscopeProcess[] = [];
  const simulations: ChildProcess[] = [];
  const streams = new AbortController();
  let prometheus: PrometheusProcess;

  beforeAll(async () => {
    const buildError = inject('buildError');
    if (buildError !== null) throw new Error(buildError);
    for (const _ of REGIONS) redis.push(await startPrivateRedis());
    const regionsFile = join(scratch.dir, 'regions.yaml');
    writeFileSync(regionsFile, stringify({ regions: Object.fromEntries(REGIONS.map((name, i) => [name, { redis_url: redis[i]!.url, command_timeout_ms: 300 }])) }));
    for (const region of REGIONS) {
      const flags = [`--region=${region}`, `--regions-file=${regionsFile}`, '--region-hold-secs=3', '--lease-duration-secs=4', '--heartbeat-interval-secs=1'];
      replicas.push(await startPoolscope(flags, { env: { POOLSCOPE_LOG_LEVEL: 'warn' } }));
    }
    const config = stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: ['poolscope.rules.yaml'],
      scrape_configs: [{ job_name: 'poolscope', static_configs: [{ targets: replicas.map((r) => `127.0.0.1:${r.port}`) }] }],
    });
    prometheus = await startPrometheus(config, { 'poolscope.rules.yaml': readFileSync(RULES_FILE, 'utf8') });
  });

  afterAll(async () => {
    streams.abort();
    for (const child of simulations) child.kill('SIGTERM');
    for (const r of redis) r.resume();
    await prometheus?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    await Promise.all(redis.map((r) => r.stop()));
    scratch.remove();
  });

  it('shows pools, heartbeats, lapses, the store, watchers, sources and regions; saved as a screenshot', async () => {
    const start = Date.now() / 1000;
    // Pools with churn in each region, through its own replica.
    replicas.forEach((replica, i) => {
      const child = spawn(process.execPath, ['bin/poolscope.js', 'simulate', `--servers=${replica.url}`, '--pools=10', `--first-pool=${i * 100}`, '--churn-interval-secs=0.7', '--routers=2', `--seed=${i + 1}`], {
        cwd: REPO_ROOT,
        env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'error' },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      checkLogStream(child.stdout!, 'poolscope simulate stdout');
      simulations.push(child);
    });
    // Routers following each replica.
    for (const [i, count] of [3, 2].entries()) {
      for (let n = 0; n < count; n += 1) {
        void fetch(`${replicas[i]!.url}/pools/watch`, { signal: streams.signal })
          .then(async (response) => {
            for await (const _ of response.body!) {
              // read on
            }
          })
          .catch(() => undefined);
      }
    }
    // A misconfigured PoolRelay: a registration the contract refuses, every 2 s.
    const refused = repeatEvery(2000, () => postJson(replicas[0]!.url, { cluster_id: 'us-east-1', namespace: 'llm' }));
    try {
      await until(14_000);
      // eu-west-1's Redis frozen past the hold: us-east-1's replica drops its pools, eu-west-1's own
      // replica cannot write (503) and its store commands fail.
      redis[1]!.pause();
      await until(7_000);
      redis[1]!.resume();
      await waitFor(async () => (await instantQuery(prometheus.url, 'min(poolscope_region_synced) == 1')).result.length === 1, {
        timeoutMs: 30_000,
        intervalMs: 500,
        message: 'both regions read again',
      });
      await until(8_000);
    } finally {
      await refused.stop();
    }
    const end = Date.now() / 1000;

    const data = new Map<number, Series[]>();
    for (const panel of dashboard.panels) {
      const series: Series[] = [];
      for (const target of panel.targets ?? []) {
        const query = new URLSearchParams({ query: substitute(target.expr), start: String(start), end: String(end), step: '1' });
        const answer = await prometheusApi<{ result: { metric: Record<string, string>; values: [number, string][] }[] }>(prometheus.url, `query_range?${query}`);
        for (const r of answer.result) series.push({ name: legendOf(target.legendFormat, r.metric), labels: r.metric, points: r.values.map(([t, v]) => [t, Number(v)]) });
      }
      data.set(panel.id, series);
    }
    // The screenshot first: when a check below fails, it shows why.
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1420, height: 900 } });
      await page.setContent(renderDashboard(`${dashboard.title}: two regions, eu-west-1's Redis frozen for 7 s (hold 3 s)`, dashboard.panels, data, [start, end]));
      mkdirSync(dirname(OUTPUT), { recursive: true });
      await page.screenshot({ path: OUTPUT, fullPage: true });
    } finally {
      await browser.close();
    }
    const byTitle = (title: string) => data.get(dashboard.panels.find((p) => p.title === title)!.id)!;
    const peak = (title: string, name: string) => Math.max(0, ...(byTitle(title).find((s) => s.name === name)?.points.map(([, v]) => v) ?? []));

    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(data.get(panel.id)!.some((s) => s.points.some(([, v]) => Number.isFinite(v))), `${panel.title} shows data`).toBe(true);
    }
    expect(byTitle('Pools by model').length).toBeGreaterThan(1);
    expect(peak('Heartbeats by outcome', 'ok')).toBeGreaterThan(0);
    expect(peak('Heartbeats by outcome', 'invalid')).toBeGreaterThan(0);
    expect(peak('Heartbeats by outcome', 'unavailable')).toBeGreaterThan(0);
    expect(peak('Regions dropped', 'eu-west-1')).toBeGreaterThan(0);
    expect(Math.min(...byTitle('Regions synced').find((s) => s.name === 'eu-west-1')!.points.map(([, v]) => v))).toBeLessThan(2);
    expect(peak('Watch streams', `127.0.0.1:${replicas[0]!.port}`), 'the streams open on the us-east-1 replica').toBe(3);
  }, 120_000);
});
