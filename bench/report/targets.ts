// The targets of the 100,000-pools round, one row each, read from the figures of one run: what it was
// before the round, what it must reach, what this run measured, and etcd's figure where etcd does the same
// thing. Rows whose figures the run lacks say "not measured".
import { formatFigure, formatValue } from './format.js';
import type { BenchRun, Figure, PartResult } from './types.js';

export interface TargetRow {
  measure: string;
  before: string;
  target: string;
  now: string;
  result: 'met' | 'NOT met' | 'not measured';
  etcd: string;
}

interface Found {
  part: PartResult;
  figure: Figure;
}

const NOT_MEASURED = 'not measured';
const NO_PEER = '—';

export function targetRows(run: BenchRun): TargetRow[] {
  const find = (id: string): Found | undefined => {
    for (const part of run.parts) {
      const figure = part.figures.find((f) => f.id === id);
      if (figure) return { part, figure };
    }
    return undefined;
  };
  const etcdPart = run.parts.find((part) => part.part === 'etcd');
  const etcd = (describe: (figure: (id: string) => Figure | undefined) => string): string => {
    if (!etcdPart) return NOT_MEASURED;
    if (etcdPart.skipped) return 'skipped (etcd not installed)';
    return describe((id) => etcdPart.figures.find((f) => f.id === id));
  };
  const row = (measure: string, before: string, target: string, now: string | undefined, met: boolean | undefined, etcdCell = NO_PEER): TargetRow => ({
    measure,
    before,
    target,
    now: now ?? NOT_MEASURED,
    result: now === undefined || met === undefined ? 'not measured' : met ? 'met' : 'NOT met',
    etcd: etcdCell,
  });
  const judgedRow = (measure: string, before: string, target: string, id: string, extra?: (found: Found) => string): TargetRow => {
    const found = find(id);
    const now = found ? `${formatFigure(found.figure)}${extra ? extra(found) : ''}${sizeNote(found.part, measure)}` : undefined;
    return row(measure, before, target, now, found?.figure.target?.met);
  };

  const rows: TargetRow[] = [
    judgedRow('new replica, 100,000 pools: spawn → complete', '9.4 s', '≤ 3 s', 'scale100k.new_replica_complete'),
    judgedRow('replica RSS with 100,000 pools', '948 MiB', '≤ 512 MiB (≈ 4 KiB a pool, process included)', 'scale100k.rss', () => {
      const perPool = find('scale100k.rss_per_pool');
      return perPool ? ` (${formatFigure(perPool.figure)} a pool)` : '';
    }),
    judgedRow('new replica, 10,000 pools: spawn → complete', '1.4 s', '≤ 0.8 s', 'scale.new_replica_complete'),
  ];

  {
    const encodings = (['gzip', 'br'] as const).map((encoding) => ({ encoding, found: find(`scale100k.${encoding}_bytes`) }));
    const measured = encodings.every(({ found }) => found);
    const now = measured
      ? encodings
          .map(({ encoding, found }) => {
            const answered = answeredEncoding(found!.part, encoding);
            if (answered !== encoding) return `${encoding}: not compressed (answered ${answered})`;
            const first = find(`scale100k.${encoding}_first_ms`)?.figure;
            const again = find(`scale100k.${encoding}_again_ms`)?.figure;
            const timing = first && again ? `; first ${formatFigure(first)}, again ${formatFigure(again)}` : '';
            return `${encoding}: ${percent(found!.figure.ratio)} of identity${timing}`;
          })
          .join('; ')
      : undefined;
    rows.push(
      row(
        'GET /pools with Accept-Encoding: gzip / br',
        'not compressed',
        'compressed once per revision, ≤ 1/4 the bytes',
        now,
        measured ? encodings.every(({ found }) => found!.figure.target?.met) : undefined,
      ),
    );
  }
  rows.push(judgedRow('GET /pools with If-None-Match: <ETag>', 'no ETag', '304 while the revision is unchanged', 'scale100k.if_none_match'));
  rows.push(
    judgedRow('watch reconnect with Last-Event-ID', 'full resync', 'only the events since, within the replay window', 'scale100k.resume', ({ figure }) =>
      figure.ratio === undefined ? '' : ` (${percent(figure.ratio)} of a full resync's bytes)`,
    ),
  );

  {
    const cpu = find('heartbeat.replica_cpu')?.figure;
    const rate = find('heartbeat.poolscope')?.figure;
    const httpLimit = find('heartbeat.http_limit')?.figure;
    const cpuRatio = cpu?.ratio;
    const share = rate && httpLimit ? rate.value / httpLimit.value : undefined;
    const now =
      cpu && cpuRatio !== undefined
        ? `${times(cpuRatio)} (${formatFigure(cpu)} vs ${formatValue(cpu.reference!.value, cpu.reference!.unit)})` +
          (share === undefined ? '' : `; ${percent(share)} of the HTTP limit`)
        : undefined;
    rows.push(
      row(
        'replica CPU per heartbeat POST vs the bare echo',
        '2.8 ×',
        '≤ 2 × (≥ 50 % of the HTTP limit)',
        now,
        cpuRatio === undefined ? undefined : cpuRatio <= 2 && share !== undefined && share >= 0.5,
      ),
    );
  }

  {
    const p99 = find('convergence.p99')?.figure;
    const hop = find('convergence.floor_p99')?.figure;
    const ratio = p99 && hop ? p99.value / hop.value : undefined;
    const now = ratio === undefined ? undefined : `${times(ratio)} (${formatFigure(p99!)}; one hop ${formatFigure(hop!)})`;
    rows.push(
      row(
        'POST on A → upsert on B, p99',
        '2.35 × one hop',
        '≤ 2 × one hop',
        now,
        ratio === undefined ? undefined : ratio <= 2,
        etcd((figure) => {
          const put = figure('etcd.put_watch_p99');
          if (!put) return NOT_MEASURED;
          const hops = hop ? `, ${times(put.value / hop.value)} one hop` : '';
          const ours = p99 ? `; poolscope ${times(p99.value / put.value)} etcd's` : '';
          return `put → watch event p99 ${formatFigure(put)}${hops}${ours}`;
        }),
      ),
    );
  }

  {
    const max = find('lapse.max')?.figure;
    const p99 = find('lapse.p99')?.figure;
    const now = max && p99 ? `max ${formatFigure(max)}, p99 ${formatFigure(p99)}` : undefined;
    rows.push(
      row(
        'lapse: deadline → delete on a watcher',
        'max 137 ms',
        'max ≤ 250 ms kept, p99 ≤ 150 ms',
        now,
        max && p99 ? max.value <= 250 && p99.value <= 150 : undefined,
        etcd((figure) => {
          const etcdMax = figure('etcd.lapse_max');
          const etcdP99 = figure('etcd.lapse_p99');
          if (!etcdMax || !etcdP99) return NOT_MEASURED;
          const ours = max && p99 ? `; poolscope max ${times(max.value / etcdMax.value)}, p99 ${times(p99.value / etcdP99.value)} etcd's` : '';
          return `lease expiry → DELETE: max ${formatFigure(etcdMax)}, p99 ${formatFigure(etcdP99)} (expired leases looked for every 500 ms)${ours}`;
        }),
      ),
    );
  }
  return rows;
}

/** A part run at another size than the row names (a quick run) says so: its title is its size. */
function sizeNote(part: PartResult, measure: string): string {
  const size = /^[\d,]+ pools/.exec(part.title)?.[0];
  return size === undefined || measure.includes(size) ? '' : ` (at ${size})`;
}

function answeredEncoding(part: PartResult, encoding: string): string {
  const encodings = part.details.encodings as Record<string, { encoding?: string }> | undefined;
  return encodings?.[encoding]?.encoding ?? 'unknown';
}

function percent(ratio: number | undefined): string {
  if (ratio === undefined || !Number.isFinite(ratio)) return '—';
  return `${(ratio * 100).toLocaleString('en-US', { maximumFractionDigits: ratio < 0.1 ? 1 : 0 })} %`;
}

function times(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)} ×` : '— ×';
}
