// deploy/grafana/poolscope.json: a Grafana dashboard whose every query is valid PromQL (checked by
// promtool through a rule file made of them, scripts/monitoring.mjs dashboard-rules, so a typo fails),
// with a panel for each thing an operator watches.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DASHBOARD_FILE, monitoringScript, promtool, scratchDir } from './support.js';

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string }[];
  panels?: Panel[];
}
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { uid: string; panels: Panel[]; templating: { list: { name: string; type: string }[] } };
const panels = dashboard.panels.filter((p) => p.type !== 'row');

describe('deploy/grafana/poolscope.json', () => {
  const scratch = scratchDir('dashboard');
  afterAll(() => scratch.remove());

  async function checkQueries(text: string): Promise<{ code: number; output: string }> {
    const file = join(scratch.dir, 'dashboard.json');
    writeFileSync(file, text);
    const made = await monitoringScript('dashboard-rules', file);
    if (made.code !== 0) return made;
    writeFileSync(join(scratch.dir, 'queries.rules.yaml'), made.output);
    return promtool('check', 'rules', join(scratch.dir, 'queries.rules.yaml'));
  }

  it('every panel query (and the replica variable) passes promtool check rules', async () => {
    const queries = panels.flatMap((p) => p.targets ?? []).length;
    const result = await checkQueries(readFileSync(DASHBOARD_FILE, 'utf8'));
    expect(result.output).toContain(`SUCCESS: ${queries + 1} rules found`);
    expect(result.code).toBe(0);
  });

  it('a typo in a query, or an unknown variable, fails the check', async () => {
    const typo = readFileSync(DASHBOARD_FILE, 'utf8').replace('sum by (outcome) (rate(', 'sum by (outcome) (rate((');
    expect((await checkQueries(typo)).code).not.toBe(0);
    const variable = readFileSync(DASHBOARD_FILE, 'utf8').replace('$__rate_interval', '$rate_window');
    const result = await checkQueries(variable);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('unknown variable $rate_window');
  });

  it('has panels for pools by state and model, heartbeats, lapses, store latency, watchers, sources and regions', () => {
    const query = (title: string) => {
      const panel = panels.find((p) => p.title === title);
      expect(panel, title).toBeDefined();
      return panel!.targets!.map((t) => t.expr).join('\n');
    };
    expect(query('Pools by state')).toContain('max by (state) (poolscope_pools');
    expect(query('Pools by model')).toContain('max by (model) (poolscope_model_pools');
    expect(query('Heartbeats by outcome')).toContain('sum by (outcome) (rate(poolscope_heartbeats_total');
    expect(query('Lapses')).toContain('poolscope_lapses_total');
    expect(panels.find((p) => p.title === 'Store command latency')?.type).toBe('heatmap');
    expect(query('Store command latency')).toContain('poolscope_store_command_seconds_bucket');
    expect(query('Watch streams')).toContain('poolscope_watch_subscribers');
    expect(query('Watch streams dropped and refused')).toContain('poolscope_watch_dropped_total');
    expect(query('Sources synced')).toContain('poolscope_source_synced');
    for (const title of ['Regions synced', 'Region read age', 'Regions dropped']) expect(query(title)).toMatch(/poolscope_region_/);
  });

  it('panels have unique ids, fit the 24-column grid, and read the data source variable', () => {
    const all = dashboard.panels;
    expect(new Set(all.map((p) => p.id)).size).toBe(all.length);
    for (const panel of all) expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
    expect(dashboard.templating.list.map((v) => `${v.name}:${v.type}`)).toEqual(['datasource:datasource', 'instance:query']);
    expect(readFileSync(DASHBOARD_FILE, 'utf8')).not.toMatch(/"uid": "(?!\$\{datasource\}|poolscope")/);
  });
});
