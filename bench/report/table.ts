// The summary printed at the end of a run: one row per figure, aligned columns.
import { formatMet, formatRatio, formatReference, formatValue } from './format.js';
import type { BenchRun } from './types.js';

export function summaryTable(run: BenchRun): string {
  const header = ['part', 'figure', 'value', 'compared with', 'ratio', 'target', 'result'];
  const rows = run.parts.flatMap((part) =>
    part.figures.map((figure) => [
      part.part,
      figure.label,
      formatValue(figure.value, figure.unit),
      formatReference(figure),
      formatRatio(figure),
      figure.target?.text ?? '',
      formatMet(figure),
    ]),
  );
  for (const failure of run.failures) rows.push([failure.part, 'FAILED', failure.error.split('\n')[0]!, '', '', '', '']);
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
