// A small strict parser of the Prometheus text exposition format (0.0.4), for tests: every line must be a
// HELP, a TYPE or a sample; a sample must belong to a family whose TYPE came first; label values are
// unescaped; a series appears once; histogram buckets are cumulative and end at +Inf = _count.
// Throws on the first violation, naming the line.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<MetricType, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition must end with a newline');
  lines.pop();
  lines.forEach((line, i) => {
    const where = `line ${i + 1} (${JSON.stringify(line)})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) {
        if (/^# (HELP|TYPE)/.test(line)) throw new Error(`malformed ${where}`);
        return; // a plain comment
      }
      const [, keyword, name, rest] = match as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name at ${where}`);
      const family = families.get(name) ?? { name, type: 'untyped' as MetricType, help: undefined, samples: [] };
      if (keyword === 'TYPE') {
        if (!TYPES.has(rest as MetricType)) throw new Error(`unknown type at ${where}`);
        if (family.samples.length > 0) throw new Error(`TYPE after samples at ${where}`);
        family.type = rest as MetricType;
      } else {
        family.help = rest;
      }
      families.set(name, family);
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(families, sample.name);
    if (!family) throw new Error(`sample of an undeclared family at ${where}`);
    const series = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(series)) throw new Error(`duplicate series at ${where}`);
    seen.add(series);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  for (const family of families.values()) {
    for (const suffix of SUFFIXES[family.type]) if (sampleName === family.name + suffix) return family;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!match) throw new Error(`malformed sample at ${where}`);
  const [, name, labelText, valueText] = match as unknown as [string, string, string | undefined, string];
  return { name, labels: labelText ? parseLabels(labelText.slice(1, -1), where) : {}, value: parseValue(valueText, where) };
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`label without '=' at ${where}`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${JSON.stringify(name)} at ${where}`);
    if (name in labels) throw new Error(`repeated label ${name} at ${where}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value at ${where}`);
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = text[j];
      if (c === undefined) throw new Error(`unterminated label value at ${where}`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[j + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape in label value at ${where}`);
        j += 2;
        continue;
      }
      value += c;
      j += 1;
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i += 1;
    else if (i < text.length) throw new Error(`expected ',' between labels at ${where}`);
  }
  return labels;
}

/** A float as Go's strconv.ParseFloat reads it (the format's rule): NaN and Inf in any case. */
function parseValue(text: string, where: string): number {
  if (/^[+]?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value ${JSON.stringify(text)} at ${where}`);
  return Number(text);
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number }>();
  const groupOf = (labels: Record<string, string>) => {
    const { le: _le, ...rest } = labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { buckets: [] }));
    return group;
  };
  for (const sample of family.samples) {
    if (sample.name.endsWith('_bucket')) {
      const le = sample.labels.le;
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      groupOf(sample.labels).buckets.push([parseValue(le, `${family.name} le`), sample.value]);
    } else if (sample.name.endsWith('_count')) {
      groupOf(sample.labels).count = sample.value;
    }
  }
  for (const { buckets, count } of groups.values()) {
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0]) || buckets[i]![1] < buckets[i - 1]![1]) {
        throw new Error(`${family.name}: buckets are not cumulative in increasing le`);
      }
    }
    const last = buckets.at(-1);
    if (!last || last[0] !== Infinity || last[1] !== count) throw new Error(`${family.name}: +Inf bucket must equal _count`);
  }
}

/** The value of one series, or undefined. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      const keys = Object.keys(labels);
      if (keys.every((k) => sample.labels[k] === labels[k]) && Object.keys(sample.labels).length === keys.length) return sample.value;
    }
  }
  return undefined;
}
