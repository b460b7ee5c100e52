// Counts a V8 heap snapshot's objects by constructor (node type and name), and compares two snapshots:
// what grew between them, by count and by self size. For the soak part's leak hunt:
//   node --import tsx bench/lib/heap-census.ts before.heapsnapshot after.heapsnapshot [top]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface CensusRow {
  /** `object:PoolTransition`, `closure:onMessage`, `string`, … */
  kind: string;
  count: number;
  selfBytes: number;
}

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Objects by kind. Strings, numbers and code are counted by type only (their names are their contents). */
export function census(path: string): Map<string, CensusRow> {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as RawSnapshot;
  const fields = raw.snapshot.meta.node_fields;
  const types = raw.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const rows = new Map<string, CensusRow>();
  for (let i = 0; i < raw.nodes.length; i += width) {
    const type = types[raw.nodes[i + typeAt]!]!;
    const named = type === 'object' || type === 'closure' || type === 'native' || type === 'hidden' || type === 'array';
    const kind = named ? `${type}:${raw.strings[raw.nodes[i + nameAt]!]!.slice(0, 80)}` : type;
    const row = rows.get(kind) ?? { kind, count: 0, selfBytes: 0 };
    row.count += 1;
    row.selfBytes += raw.nodes[i + sizeAt]!;
    rows.set(kind, row);
  }
  return rows;
}

/** Kinds whose count or size grew from `before` to `after`, largest size growth first. */
export function growth(before: Map<string, CensusRow>, after: Map<string, CensusRow>): CensusRow[] {
  const out: CensusRow[] = [];
  for (const [kind, row] of after) {
    const old = before.get(kind) ?? { kind, count: 0, selfBytes: 0 };
    if (row.count > old.count || row.selfBytes > old.selfBytes) out.push({ kind, count: row.count - old.count, selfBytes: row.selfBytes - old.selfBytes });
  }
  return out.sort((a, b) => b.selfBytes - a.selfBytes);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [before, after, top = '30'] = process.argv.slice(2);
  if (!before || !after) {
    process.stderr.write('usage: heap-census.ts BEFORE.heapsnapshot AFTER.heapsnapshot [top]\n');
    process.exit(2);
  }
  const a = census(before);
  const b = census(after);
  const total = (rows: Map<string, CensusRow>) => [...rows.values()].reduce((sum, r) => sum + r.selfBytes, 0);
  process.stdout.write(`total self size: ${(total(a) / 2 ** 20).toFixed(2)} MiB → ${(total(b) / 2 ** 20).toFixed(2)} MiB\n`);
  process.stdout.write('count Δ\tself bytes Δ\tcount after\tkind\n');
  for (const row of growth(a, b).slice(0, Number(top))) {
    process.stdout.write(`${row.count}\t${row.selfBytes}\t${b.get(row.kind)!.count}\t${row.kind}\n`);
  }
}
