// Offline checks of the prometheus-operator objects of deploy/monitoring, as test/deploy/k8s-validate.ts
// checks the built-in kinds: required fields, types, duration patterns, and no field the CRD lacks. The
// schemas are the subset of the monitoring.coreos.com/v1 CRDs (ServiceMonitor, PrometheusRule) these
// manifests may use, written out here; a field outside it fails, naming its path.

type Schema =
  | { type: 'string'; pattern?: RegExp; enum?: readonly string[] }
  | { type: 'integer' | 'boolean' | 'int-or-string' }
  | { type: 'object'; properties: Record<string, Schema>; required?: readonly string[] }
  | { type: 'map'; values: Schema }
  | { type: 'array'; items: Schema }
  /** Accepted as it is (fields these manifests do not use, such as relabelings). */
  | { type: 'any' };

/** The CRDs' duration pattern (e.g. `30s`, `1m30s`, `0`). */
const DURATION = /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/;

const string: Schema = { type: 'string' };
const duration: Schema = { type: 'string', pattern: DURATION };
const stringMap: Schema = { type: 'map', values: string };
const any: Schema = { type: 'any' };

const metadata: Schema = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', pattern: /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/ }, namespace: string, labels: stringMap, annotations: stringMap },
};

const endpoint: Schema = {
  type: 'object',
  properties: {
    port: string,
    targetPort: { type: 'int-or-string' },
    path: { type: 'string', pattern: /^\// },
    scheme: { type: 'string', enum: ['http', 'https'] },
    params: { type: 'map', values: { type: 'array', items: string } },
    interval: duration,
    scrapeTimeout: duration,
    honorLabels: { type: 'boolean' },
    honorTimestamps: { type: 'boolean' },
    relabelings: { type: 'array', items: any },
    metricRelabelings: { type: 'array', items: any },
    tlsConfig: any,
    authorization: any,
    basicAuth: any,
  },
};

/** An object of a kind: apiVersion, kind, metadata and the kind's `spec`, all four required. */
function kindSchema(spec: Schema): Schema {
  return { type: 'object', required: ['apiVersion', 'kind', 'metadata', 'spec'], properties: { apiVersion: string, kind: string, metadata, spec } };
}

const SERVICE_MONITOR = kindSchema({
  type: 'object',
  required: ['selector', 'endpoints'],
  properties: {
    jobLabel: string,
    targetLabels: { type: 'array', items: string },
    podTargetLabels: { type: 'array', items: string },
    endpoints: { type: 'array', items: endpoint },
    selector: { type: 'object', properties: { matchLabels: stringMap, matchExpressions: { type: 'array', items: any } } },
    namespaceSelector: { type: 'object', properties: { any: { type: 'boolean' }, matchNames: { type: 'array', items: string } } },
    sampleLimit: { type: 'integer' },
  },
});

const rule: Schema = {
  type: 'object',
  required: ['expr'],
  properties: {
    record: string,
    alert: string,
    expr: { type: 'int-or-string' },
    for: duration,
    keep_firing_for: duration,
    labels: stringMap,
    annotations: stringMap,
  },
};

const PROMETHEUS_RULE = kindSchema({
  type: 'object',
  properties: {
    groups: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name'],
        properties: { name: string, interval: duration, limit: { type: 'integer' }, rules: { type: 'array', items: rule } },
      },
    },
  },
});

const KINDS: Record<string, Schema> = {
  'monitoring.coreos.com/v1/ServiceMonitor': SERVICE_MONITOR,
  'monitoring.coreos.com/v1/PrometheusRule': PROMETHEUS_RULE,
};

/** Every problem of a ServiceMonitor or PrometheusRule, each naming its path; empty when it is valid. */
export function validateOperatorObject(object: unknown): string[] {
  if (!isRecord(object)) return ['not an object'];
  const schema = KINDS[`${String(object.apiVersion)}/${String(object.kind)}`];
  if (schema === undefined) return [`${String(object.apiVersion)} ${String(object.kind)}: not a kind these checks know`];
  const problems = check(object, schema, '');
  // A rule is a recording rule or an alert, never both (the CRD says so in prose only).
  const groups = (object.spec as { groups?: { rules?: Record<string, unknown>[] }[] } | undefined)?.groups ?? [];
  groups.forEach((group, g) =>
    (group.rules ?? []).forEach((r, i) => {
      if (('record' in r) === ('alert' in r)) problems.push(`spec.groups[${g}].rules[${i}]: exactly one of record and alert`);
      if ('record' in r && ('for' in r || 'annotations' in r)) problems.push(`spec.groups[${g}].rules[${i}]: a recording rule has no for or annotations`);
    }),
  );
  return problems;
}

function check(value: unknown, schema: Schema, path: string): string[] {
  const at = path || '(top)';
  switch (schema.type) {
    case 'any':
      return [];
    case 'string':
      if (typeof value !== 'string') return [`${at}: must be a string`];
      if (schema.pattern && !schema.pattern.test(value)) return [`${at}: "${value}" does not match ${schema.pattern}`];
      if (schema.enum && !schema.enum.includes(value)) return [`${at}: "${value}" is not one of ${schema.enum.join(', ')}`];
      return [];
    case 'integer':
      return Number.isInteger(value) ? [] : [`${at}: must be an integer`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${at}: must be a boolean`];
    case 'int-or-string':
      return typeof value === 'string' || Number.isInteger(value) ? [] : [`${at}: must be an integer or a string`];
    case 'array':
      if (!Array.isArray(value)) return [`${at}: must be a list`];
      return value.flatMap((item, i) => check(item, schema.items, `${path}[${i}]`));
    case 'map':
      if (!isRecord(value)) return [`${at}: must be a mapping`];
      return Object.entries(value).flatMap(([key, item]) => check(item, schema.values, `${path}.${key}`));
    case 'object': {
      if (!isRecord(value)) return [`${at}: must be a mapping`];
      const missing = (schema.required ?? []).filter((name) => !(name in value)).map((name) => `${path ? `${path}.` : ''}${name}: required`);
      return [
        ...missing,
        ...Object.entries(value).flatMap(([key, item]) => {
          const field = schema.properties[key];
          const fieldPath = path ? `${path}.${key}` : key;
          return field === undefined ? [`${fieldPath}: unknown field`] : check(item, field, fieldPath);
        }),
      ];
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
