// The operator's kit (deploy/prometheus, deploy/grafana, deploy/monitoring), kept in step with itself:
//   node scripts/monitoring.mjs prometheusrule   the PrometheusRule of deploy/monitoring, from the rules file (stdout)
//   node scripts/monitoring.mjs generate         writes it to deploy/monitoring/prometheusrule.yaml
//   node scripts/monitoring.mjs dashboard-rules [FILE]  a rule file whose expressions are the dashboard's (or
//                                                FILE's) queries (stdout)
//   node scripts/monitoring.mjs check            promtool check + test the rules, check the dashboard's queries,
//                                                and that the committed PrometheusRule is the generated one
// `npm run monitoring:generate` and `npm run monitoring:check` run the last two; test/monitoring runs them too.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const RULES = join(ROOT, 'deploy/prometheus/poolscope.rules.yaml');
export const RULES_TEST = join(ROOT, 'deploy/prometheus/poolscope.rules.test.yaml');
export const DASHBOARD = join(ROOT, 'deploy/grafana/poolscope.json');
export const PROMETHEUS_RULE = join(ROOT, 'deploy/monitoring/prometheusrule.yaml');

const HEADER = `# Generated from deploy/prometheus/poolscope.rules.yaml by \`npm run monitoring:generate\`: edit that file, then
# run it (test/monitoring fails while this file differs from what it generates). prometheus-operator loads
# these rules into every Prometheus whose ruleSelector matches the labels below (README.md, "Monitoring").
`;

/** The PrometheusRule object for prometheus-operator: the rules file's groups, unchanged. */
export function prometheusRuleYaml(rulesText = readFileSync(RULES, 'utf8')) {
  const { groups } = parse(rulesText);
  const object = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'poolscope', namespace: 'poolscope', labels: { 'app.kubernetes.io/name': 'poolscope' } },
    spec: { groups },
  };
  return HEADER + stringify(object, { lineWidth: 0 });
}

/** Grafana's variables, as the dashboard query check substitutes them: a value valid wherever it appears. */
const VARIABLES = {
  __rate_interval: '5m',
  __interval: '1m',
  __range: '1h',
  instance: '.+',
};

/** Every query of the dashboard: [where, PromQL with variables substituted]; throws on an unknown variable. */
export function dashboardQueries(dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'))) {
  const queries = [];
  const substitute = (where, text) =>
    text.replace(/\$\{?(\w+)(?::\w+)?\}?/g, (_, name) => {
      if (!(name in VARIABLES)) throw new Error(`${where}: unknown variable $${name}`);
      return VARIABLES[name];
    });
  const panels = (list) => list.flatMap((panel) => [panel, ...panels(panel.panels ?? [])]);
  for (const panel of panels(dashboard.panels ?? [])) {
    for (const target of panel.targets ?? []) {
      const where = `panel ${panel.id} "${panel.title}" target ${target.refId}`;
      if (typeof target.expr !== 'string' || target.expr.trim() === '') throw new Error(`${where}: no expr`);
      queries.push([where, substitute(where, target.expr)]);
    }
  }
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const where = `variable ${variable.name}`;
    const text = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    // label_values(<series selector>, <label>) is Grafana's; its selector is PromQL.
    const match = /^label_values\((.+),\s*(\w+)\)$/.exec(text ?? '');
    if (!match) throw new Error(`${where}: expected label_values(<selector>, <label>), got ${text}`);
    queries.push([where, substitute(where, match[1])]);
  }
  return queries;
}

/** A rule file whose recording rules are the dashboard's queries, for `promtool check rules`. */
export function dashboardRulesYaml(dashboard) {
  const rules = dashboardQueries(dashboard).map(([where, expr], i) => ({ record: `dashboard:query_${i}`, expr, labels: { query: where } }));
  return stringify({ groups: [{ name: 'poolscope-dashboard-queries', rules }] }, { lineWidth: 0 });
}

function promtool(args) {
  return execFileSync('promtool', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function check() {
  process.stdout.write(promtool(['check', 'rules', RULES]));
  process.stdout.write(promtool(['test', 'rules', RULES_TEST]));
  const dir = mkdtempSync(join(tmpdir(), 'poolscope-dashboard-'));
  try {
    const file = join(dir, 'dashboard-queries.rules.yaml');
    writeFileSync(file, dashboardRulesYaml());
    process.stdout.write(promtool(['check', 'rules', file]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (readFileSync(PROMETHEUS_RULE, 'utf8') !== prometheusRuleYaml()) {
    throw new Error(`${PROMETHEUS_RULE} differs from the rules file: run npm run monitoring:generate`);
  }
  process.stdout.write('deploy/monitoring/prometheusrule.yaml matches the rules file\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2];
  try {
    if (command === 'prometheusrule') process.stdout.write(prometheusRuleYaml());
    else if (command === 'generate') writeFileSync(PROMETHEUS_RULE, prometheusRuleYaml());
    else if (command === 'dashboard-rules') {
      const file = process.argv[3];
      process.stdout.write(dashboardRulesYaml(file === undefined ? undefined : JSON.parse(readFileSync(file, 'utf8'))));
    }
    else if (command === 'check') check();
    else {
      process.stderr.write('usage: node scripts/monitoring.mjs prometheusrule|generate|dashboard-rules|check\n');
      process.exit(2);
    }
  } catch (error) {
    process.stderr.write(`${error.stderr ?? ''}${error.stdout ?? ''}monitoring: ${error.message}\n`);
    process.exit(1);
  }
}
