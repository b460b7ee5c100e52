// Numbers as the summary table and BENCHMARKS.md show them.
import type { Figure } from './types.js';

/** The figure's value as shown: its own wording when it has one, else the number and its unit. */
export function formatFigure(figure: Figure): string {
  return figure.shown ?? formatValue(figure.value, figure.unit);
}

export function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return `— ${unit}`;
  const magnitude = Math.abs(value);
  const digits = unit === 'KiB' ? 2 : unit === 'MiB' ? 1 : unit === 'ms' || unit === 'µs' ? (magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0) : 0;
  return `${value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })} ${unit}`;
}

/** The figure as a percentage of its reference. */
export function formatRatio(figure: Figure): string {
  if (figure.ratio === undefined) return '';
  if (!Number.isFinite(figure.ratio)) return '—';
  return `${(figure.ratio * 100).toLocaleString('en-US', { maximumFractionDigits: figure.ratio < 0.1 ? 1 : 0 })} %`;
}

export function formatReference(figure: Figure): string {
  return figure.reference ? `${figure.reference.label}: ${formatValue(figure.reference.value, figure.reference.unit)}` : '';
}

export function formatMet(figure: Figure): string {
  if (!figure.target) return '';
  return figure.target.met ? 'met' : 'NOT met';
}
