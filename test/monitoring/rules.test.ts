// deploy/prometheus: the rules load in promtool, their unit tests pass (and fail when an alert's `for:`
// is broken), every alert explains itself (a summary, a description naming the likely cause first, a
// runbook that is a section of docs/operations.md), every alert has a firing and a quiet test case, and
// every metric the rules and the dashboard read is one poolscope exports.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ServiceMetrics } from '../../src/metrics/metrics.js';
import { alertsOf, DASHBOARD_FILE, promtool, readRules, REPO_ROOT, RULES_FILE, RULES_TEST_FILE, scratchDir } from './support.js';

const RUNBOOK = 'https://github.com/poolscope/poolscope/blob/main/docs/operations.md';
const rules = readRules();
const alerts = alertsOf(rules);

/** GitHub's anchor of a Markdown heading. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const operations = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
const headings = [...operations.matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1]!);

interface AlertCase {
  alertname: string;
  eval_time: string;
  exp_alerts?: unknown[];
}
const unitTests = parse(readFileSync(RULES_TEST_FILE, 'utf8')) as { tests: { name: string; alert_rule_test?: AlertCase[] }[] };
const cases = unitTests.tests.flatMap((t) => t.alert_rule_test ?? []);

describe('deploy/prometheus/poolscope.rules.yaml', () => {
  it('has the alerts the operators asked for', () => {
    expect(alerts.map((a) => a.alert)).toEqual(
      expect.arrayContaining([
        'PoolscopeNoReplicaScraped',
        'PoolscopeStoreUnreachable',
        'PoolscopeReplicaIncomplete',
        'PoolscopeRegionDropped',
        'PoolscopeHeartbeatErrors',
        'PoolscopeListedPoolsHalved',
        'PoolscopeWatchersDropped',
        'PoolscopePoolsUnregistered',
        'PoolscopePoolsOneSided',
        'PoolscopePoolsLapsed',
      ]),
    );
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
  });

  it('passes `promtool check rules`', async () => {
    const result = await promtool('check', 'rules', RULES_FILE);
    expect(result.output).toContain(`SUCCESS: ${rules.groups.flatMap((g) => g.rules).length} rules found`);
    expect(result.code).toBe(0);
  });

  it('passes its unit tests (`promtool test rules`)', async () => {
    const result = await promtool('test', 'rules', RULES_TEST_FILE);
    expect(result.output).toContain('SUCCESS');
    expect(result.code, result.output).toBe(0);
  });

  describe('the unit tests catch a broken rule', () => {
    const scratch = scratchDir('rules');
    afterAll(() => scratch.remove());

    it.each([
      ['PoolscopeStoreUnreachable', (rule: Record<string, unknown>) => void (rule.for = '0s')],
      ['PoolscopeHeartbeatErrors', (rule: Record<string, unknown>) => void (rule.expr = String(rule.expr).replace('> 0.05', '> 0.5'))],
      ['PoolscopePoolsLapsed', (rule: Record<string, unknown>) => void (rule.expr = 'max by (job) (poolscope_pools{state="lapsed"}) > 0')],
    ])('%s changed: promtool test rules fails and names it', async (name, change) => {
      const broken = readRules();
      const rule = alertsOf(broken).find((a) => a.alert === name)!;
      change(rule as unknown as Record<string, unknown>);
      writeFileSync(join(scratch.dir, 'poolscope.rules.yaml'), stringify(broken));
      copyFileSync(RULES_TEST_FILE, join(scratch.dir, 'poolscope.rules.test.yaml'));
      const result = await promtool('test', 'rules', join(scratch.dir, 'poolscope.rules.test.yaml'));
      expect(result.code).not.toBe(0);
      expect(result.output).toContain(`alertname: ${name}`);
    });
  });

  it.each(alerts.map((a) => [a.alert!, a] as const))('%s: severity, summary, a description naming the likely cause first, a runbook in docs/operations.md', (name, alert) => {
    expect(['warning', 'critical']).toContain(alert.labels?.severity);
    expect(alert.annotations?.summary?.length).toBeGreaterThan(10);
    expect(alert.annotations?.description).toMatch(/^Likely /);
    expect(alert.annotations?.runbook_url).toBe(`${RUNBOOK}#${name.toLowerCase()}`);
    const heading = headings.find((h) => anchorOf(h) === name.toLowerCase());
    expect(heading, `docs/operations.md has no heading with the anchor #${name.toLowerCase()}`).toBeDefined();
    // The runbook section names the alert's expression, as written in the rules file.
    const start = operations.indexOf(`### ${heading}\n`);
    const end = operations.indexOf('\n#', start + 1);
    const section = operations.slice(start, end === -1 ? undefined : end).replace(/\s+/g, ' ');
    expect(section).toContain(alert.expr.replace(/\s+/g, ' ').trim());
  });

  it.each(alerts.map((a) => a.alert!))('%s: unit-tested firing and not firing', (name) => {
    const mine = cases.filter((c) => c.alertname === name);
    expect(mine.some((c) => (c.exp_alerts ?? []).length > 0), 'a case where it fires').toBe(true);
    expect(mine.some((c) => (c.exp_alerts ?? []).length === 0), 'a case where it does not').toBe(true);
  });
});

describe('metric names in the rules and the dashboard', () => {
  it('are all exported by poolscope (a misspelt name is valid PromQL, so promtool cannot tell)', async () => {
    const { body } = await new ServiceMetrics({ processMetrics: false }).text();
    const exported = new Set<string>();
    for (const [, name, type] of body.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exported.add(name!);
      if (type === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) exported.add(`${name}${suffix}`);
    }
    expect(exported.has('poolscope_pools')).toBe(true);
    const dashboard = readFileSync(DASHBOARD_FILE, 'utf8');
    const used = new Set([...`${readFileSync(RULES_FILE, 'utf8')}\n${dashboard}`.matchAll(/(?<![:\w])(poolscope_[a-z_]+)(?![:\w])/g)].map((m) => m[1]!));
    const unknown = [...used].filter((name) => !exported.has(name));
    expect(unknown).toEqual([]);
  });
});
