// The shape of a benchmark run, as bench/results/latest.json holds it and BENCHMARKS.md renders it.

export type PartName =
  | 'heartbeat'
  | 'startup'
  | 'convergence'
  | 'lapse'
  | 'etcd'
  | 'scale'
  | 'scale100k'
  | 'regions'
  | 'outage'
  | 'fleet'
  | 'soak'
  | 'watchers';
export const PART_NAMES: readonly PartName[] = ['heartbeat', 'startup', 'convergence', 'lapse', 'etcd', 'scale', 'scale100k', 'regions', 'outage', 'fleet', 'soak', 'watchers'];

/** What a figure is compared with: a limit measured in the same run, or a target from the issue. */
export interface Reference {
  label: string;
  value: number;
  unit: string;
}

export interface Figure {
  id: string;
  label: string;
  value: number;
  unit: string;
  reference?: Reference;
  /** value / reference.value */
  ratio?: number;
  /** How the value is shown, when a number and its unit do not say it (an HTTP status and its bytes). */
  shown?: string;
  /** Present on the figures the issue sets a target for. */
  target?: { text: string; met: boolean };
}

export interface PartResult {
  part: PartName;
  title: string;
  /** How the part was measured, in a sentence or two (rendered under its table). */
  method: string;
  figures: Figure[];
  /** Raw numbers behind the figures (latency summaries, error counts, settings). */
  details: Record<string, unknown>;
  /** Why the part measured nothing (a peer that is not installed); its figures are then empty. */
  skipped?: string;
  durationMs: number;
  /** 1-minute load average when the part started (other work on the machine shows here). */
  loadAverageAtStart: number;
}

export interface PartFailure {
  part: PartName;
  error: string;
}

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  redis: string;
  /** `etcd --version`'s first line, or why there is none (the etcd part's peer). */
  etcd?: string;
  os: string;
  /** 1-minute load average at the start and the end: above ~0.5 the machine was shared with other work. */
  loadAverageStart: number;
  loadAverageEnd?: number;
  gitCommit: string;
  gitDirty: boolean;
}

export interface BenchRun {
  startedAt: string;
  finishedAt: string;
  command: string;
  quick: boolean;
  machine: MachineInfo;
  parts: PartResult[];
  failures: PartFailure[];
}

/** A figure judged against a reference: `at-least` for throughput, `below`/`at-most` for latency and size. */
export function judged(options: {
  id: string;
  label: string;
  value: number;
  unit: string;
  reference: Reference;
  comparison: 'at-least' | 'below' | 'at-most';
  /** For `at-least`: the ratio to reach (0.5 = half the limit). For `below`/`at-most`: 1 (the target itself). */
  threshold: number;
  targetText: string;
}): Figure {
  const ratio = options.value / options.reference.value;
  const met =
    options.comparison === 'at-least'
      ? ratio >= options.threshold
      : options.comparison === 'at-most'
        ? ratio <= options.threshold
        : ratio < options.threshold;
  return {
    id: options.id,
    label: options.label,
    value: options.value,
    unit: options.unit,
    reference: options.reference,
    ratio,
    target: { text: options.targetText, met: Number.isFinite(ratio) && met },
  };
}

/** A figure shown for context (a limit, a median), with no target of its own. */
export function informational(options: { id: string; label: string; value: number; unit: string; reference?: Reference }): Figure {
  const figure: Figure = { id: options.id, label: options.label, value: options.value, unit: options.unit };
  if (options.reference) {
    figure.reference = options.reference;
    figure.ratio = options.value / options.reference.value;
  }
  return figure;
}

/** A figure whose target is a condition (a status, a resumed stream) rather than a bound on its value. */
export function checked(options: {
  id: string;
  label: string;
  value: number;
  unit: string;
  shown: string;
  reference?: Reference;
  targetText: string;
  met: boolean;
}): Figure {
  const figure: Figure = { id: options.id, label: options.label, value: options.value, unit: options.unit, shown: options.shown };
  if (options.reference) {
    figure.reference = options.reference;
    figure.ratio = options.value / options.reference.value;
  }
  figure.target = { text: options.targetText, met: options.met };
  return figure;
}
