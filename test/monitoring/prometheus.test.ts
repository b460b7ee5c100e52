// The rules in a real Prometheus (Debian's `prometheus`) scraping two real poolscope replicas on one
// redis-server every second: Prometheus's HTTP API shows both replicas' pools, every rule of the file
// loads and evaluates, every dashboard query runs; freezing Redis (SIGSTOP) takes
// PoolscopeStoreUnreachable through pending to firing on both replicas, and thawing it (SIGCONT)
// resolves it; with both replicas stopped, PoolscopeNoReplicaScraped fires. The rules are a test copy of
// the file with those two alerts' `for:` shortened to 2 s; everything else is the file as shipped.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { postJson } from '../support/http.js';
import { redisReplicaFlags, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { useRedis } from '../support/use-redis.js';
import { eventually, repeatEvery, waitFor } from '../support/wait.js';
import { alertsOf, instantQuery, monitoringScript, prometheusApi, readRules, startPrometheus, type ApiAlert, type PrometheusProcess } from './support.js';

const SHORTENED = { PoolscopeStoreUnreachable: '2s', PoolscopeNoReplicaScraped: '2s' } as const;

/** The rules file with the `for:` of SHORTENED's alerts replaced. */
function testRules(): string {
  const rules = readRules();
  for (const alert of alertsOf(rules)) {
    const shortened = SHORTENED[alert.alert as keyof typeof SHORTENED];
    if (shortened !== undefined) alert.for = shortened;
  }
  return stringify(rules);
}

describe('the rules in Prometheus, scraping two replicas', () => {
  const redis = useRedis('monitoring');
  const replicas: PoolscopeProcess[] = [];
  let prometheus: PrometheusProcess;
  let heartbeats: { stop(): Promise<void> } | undefined;
  const model = 'monitoring/test-model';

  beforeAll(async () => {
    const buildError = inject('buildError');
    if (buildError !== null) throw new Error(buildError);
    for (let i = 0; i < 2; i += 1) replicas.push(await startPoolscope(redisReplicaFlags(redis, redis.prefix)));
    const config = stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: ['poolscope.rules.yaml'],
      scrape_configs: [{ job_name: 'poolscope', static_configs: [{ targets: replicas.map((r) => `127.0.0.1:${r.port}`) }] }],
    });
    prometheus = await startPrometheus(config, { 'poolscope.rules.yaml': testRules() });
    // A PoolRelay renewing one pool through the first replica.
    heartbeats = repeatEvery(1000, () => postJson(replicas[0]!.url, registration({ model })));
  });

  afterAll(async () => {
    await heartbeats?.stop();
    redis.resume();
    await prometheus?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
  });

  const alerts = async (name: string) => (await prometheusApi<{ alerts: ApiAlert[] }>(prometheus.url, 'alerts')).alerts.filter((a) => a.labels.alertname === name);
  const instances = () => replicas.map((r) => `127.0.0.1:${r.port}`).sort();

  it("shows poolscope_pools and poolscope_model_pools from both replicas, and the listed-pools recording rule", async () => {
    await eventually(
      async () => {
        const live = await instantQuery(prometheus.url, 'poolscope_pools{job="poolscope", state="live"}');
        expect(live.result.map((s) => [s.metric.instance, s.value[1]]).sort()).toEqual(instances().map((i) => [i, '1']));
        const byModel = await instantQuery(prometheus.url, `poolscope_model_pools{model="${model}"}`);
        expect(byModel.result.map((s) => s.metric.instance).sort()).toEqual(instances());
        const listed = await instantQuery(prometheus.url, 'job:poolscope_pools_listed:max');
        expect(listed.result).toEqual([{ metric: { __name__: 'job:poolscope_pools_listed:max', job: 'poolscope' }, value: [expect.any(Number), '1'] }]);
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
  }, 30_000);

  it('loads every rule of the file, and each evaluates without error', async () => {
    const expected = readRules().groups.flatMap((g) => g.rules.map((r) => r.alert ?? r.record));
    await eventually(
      async () => {
        const { groups } = await prometheusApi<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>(prometheus.url, 'rules');
        const loaded = groups.flatMap((g) => g.rules);
        expect(loaded.map((r) => r.name)).toEqual(expected);
        for (const rule of loaded) expect(`${rule.name}: ${rule.health} ${rule.lastError ?? ''}`.trim()).toBe(`${rule.name}: ok`);
      },
      { timeoutMs: 10_000, intervalMs: 250 },
    );
  }, 20_000);

  it("runs every dashboard query without error", async () => {
    const made = await monitoringScript('dashboard-rules');
    expect(made.code, made.output).toBe(0);
    const queries = (parse(made.output) as { groups: { rules: { expr: string; labels: { query: string } }[] }[] }).groups[0]!.rules;
    expect(queries.length).toBeGreaterThan(10);
    for (const { expr, labels } of queries) {
      const answer = await instantQuery(prometheus.url, expr).catch((error: Error) => error);
      expect(answer instanceof Error ? `${labels.query}: ${answer.message}` : 'ok').toBe('ok');
    }
  });

  it('PoolscopeStoreUnreachable goes pending, then fires on both replicas while Redis is frozen, and resolves when it thaws', async () => {
    expect(await alerts('PoolscopeStoreUnreachable')).toEqual([]);
    redis.pause();
    const seen = new Set<string>();
    const firing = await waitFor(
      async () => {
        const now = await alerts('PoolscopeStoreUnreachable');
        for (const alert of now) seen.add(alert.state);
        const fired = now.filter((a) => a.state === 'firing');
        return fired.length === 2 && fired;
      },
      { timeoutMs: 20_000, intervalMs: 100, message: 'PoolscopeStoreUnreachable firing on both replicas' },
    );
    expect([...seen].sort()).toEqual(['firing', 'pending']);
    expect(firing.map((a) => a.labels.instance).sort()).toEqual(instances());
    for (const alert of firing) {
      expect(alert.labels).toMatchObject({ job: 'poolscope', source: 'store', severity: 'critical' });
      expect(alert.annotations.summary).toBe(`poolscope replica ${alert.labels.instance} has not read its store for 1 minute.`);
      expect(alert.annotations.description).toMatch(/^Likely its Redis \(--redis-url\) is down, frozen or unreachable/);
      expect(alert.annotations.runbook_url).toMatch(/docs\/operations\.md#poolscopestoreunreachable$/);
    }

    redis.resume();
    await waitFor(async () => (await alerts('PoolscopeStoreUnreachable')).length === 0, {
      timeoutMs: 30_000,
      intervalMs: 250,
      message: 'PoolscopeStoreUnreachable resolved',
    });
    const synced = await instantQuery(prometheus.url, 'poolscope_source_synced{source="store"}');
    expect(synced.result.map((s) => s.value[1])).toEqual(['1', '1']);
  }, 60_000);

  it('PoolscopeNoReplicaScraped fires once neither replica answers its scrape', async () => {
    expect(await alerts('PoolscopeNoReplicaScraped')).toEqual([]);
    await heartbeats?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    const fired = await waitFor(
      async () => {
        const now = await alerts('PoolscopeNoReplicaScraped');
        return now.some((a) => a.state === 'firing') && now;
      },
      { timeoutMs: 20_000, intervalMs: 250, message: 'PoolscopeNoReplicaScraped firing' },
    );
    expect(fired).toEqual([expect.objectContaining({ labels: { alertname: 'PoolscopeNoReplicaScraped', severity: 'critical' }, state: 'firing' })]);
  }, 30_000);
});
