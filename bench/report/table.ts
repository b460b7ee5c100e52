// The summary printed at the end of a run: one row per figure, aligned columns.
import { formatFigure, formatMet, formatRatio, formatReference } from './format.js';
import { targetRows } from './targets.js';
import type { BenchRun } from './types.js';

export function summaryTable(run: BenchRun): string {
  const header = ['part', 'figure', 'value', 'compared with', 'ratio', 'target', 'result'];
  const rows = run.parts.flatMap((part) =>
    part.figures.map((figure) => [
      part.part,
      figure.label,
      formatFigure(figure),
      formatReference(figure),
      formatRatio(figure),
      figure.target?.text ?? '',
      formatMet(figure),
    ]),
  );
  for (const part of run.parts) if (part.skipped) rows.push([part.part, 'SKIPPED', part.skipped, '', '', '', '']);
  for (const failure of run.failures) rows.push([failure.part, 'FAILED', failure.error.split('\n')[0]!, '', '', '', '']);
  const targets = targetRows(run).map((r) => [r.measure, r.before, r.target, r.now, r.result, r.etcd]);
  return `${aligned(header, rows)}\n\nTargets: faster than etcd, a fleet's day\n${aligned(['measure', 'before', 'target', 'this run', 'result', 'etcd'], targets)}`;
}

function aligned(header: string[], rows: string[][]): string {
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
