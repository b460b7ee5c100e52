// The targets of the round, one row each, read from the figures of one run: what it was before the round,
// what it must reach, what this run measured, and etcd's figure where etcd does the same thing; then the
// promises of earlier rounds kept (compression, conditional reads, the filter flood, resuming, lapses).
// Rows whose figures the run lacks say "not measured".
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

  const rows: TargetRow[] = [];
  {
    const p99 = find('convergence.p99')?.figure;
    const hop = find('convergence.floor_p99')?.figure;
    const etcdPut = etcdPart && !etcdPart.skipped ? etcdPart.figures.find((f) => f.id === 'etcd.put_watch_p99') : undefined;
    const now = p99 ? `${formatFigure(p99)}${hop ? ` (${times(p99.value / hop.value)} one hop)` : ''}${etcdPut ? `; ${times(p99.value / etcdPut.value)} etcd's` : ''}` : undefined;
    rows.push(
      row(
        "POST on A → upsert on B's watcher, p99",
        "1.64 × one hop; etcd's 1.04 ×",
        "≤ etcd's put → watch p99 in the same run",
        now,
        p99 && etcdPut ? p99.value <= etcdPut.value : undefined,
        etcd((figure) => {
          const put = figure('etcd.put_watch_p99');
          if (!put) return NOT_MEASURED;
          return `put → watch event p99 ${formatFigure(put)}${hop ? `, ${times(put.value / hop.value)} one hop` : ''}`;
        }),
      ),
    );
  }
  {
    const cpu = find('heartbeat.replica_cpu')?.figure;
    const hono = find('heartbeat.hono_echo_cpu')?.figure;
    const cpuRatio = cpu?.ratio;
    const now =
      cpu && cpuRatio !== undefined
        ? `${times(cpuRatio)} (${formatFigure(cpu)} vs ${formatValue(cpu.reference!.value, cpu.reference!.unit)})` +
          (hono ? `; the Hono echo ${formatFigure(hono)}` : '')
        : undefined;
    rows.push(row('replica CPU per heartbeat vs a raw node:http echo (same body read and parsed)', '1.73 × a Hono echo', '≤ 1.5 ×', now, cpuRatio === undefined ? undefined : cpuRatio <= 1.5));
  }
  rows.push(
    judgedRow('spawn → listening (memory store)', '422 ms', '≤ 150 ms', 'startup.listening', () => {
      const bare = find('startup.bare_node')?.figure;
      return bare ? ` (a bare node:http server ${formatFigure(bare)})` : '';
    }),
    judgedRow('new replica, 10,000 pools: spawn → complete', '861 ms', '≤ 0.6 s', 'scale.new_replica_complete'),
    judgedRow('new replica, 100,000 pools: spawn → complete', '4.44 s', '≤ 3 s', 'scale100k.new_replica_complete'),
    judgedRow('event-loop delay while a change at 100,000 pools is served to GETs and 1,000 watchers', '0.4–1 s stalls', 'max ≤ 50 ms', 'scale100k.change_loop_delay_max'),
    judgedRow('r3 returns after its drop → every r1/r2 replica lists its 10,000 pools', '2.97 s', '≤ 2 s', 'regions.return_max'),
    judgedRow('replica RSS with 100,000 pools', '445 MiB', '≤ 350 MiB', 'scale100k.rss', () => {
      const perPool = find('scale100k.rss_per_pool');
      return perPool ? ` (${formatFigure(perPool.figure)} a pool)` : '';
    }),
  );
  {
    const p99s = ['A', 'B'].map((name) => find(`fleet.${name}.loop_p99`)?.figure);
    const measured = p99s.every((f) => f !== undefined);
    rows.push(
      row(
        'fleet: event-loop delay p99, each replica',
        'not measured',
        '≤ 10 ms',
        measured ? p99s.map((f, i) => `${'AB'[i]}: ${formatFigure(f!)}`).join('; ') : undefined,
        measured ? p99s.every((f) => f!.target?.met) : undefined,
      ),
      judgedRow('fleet: change → every watcher, p99', 'not measured', '≤ 50 ms', 'fleet.change_watchers_p99'),
      judgedRow('fleet: 5xx answers', 'not measured', 'none', 'fleet.status_5xx'),
    );
  }

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
    judgedRow('GET /healthz during 1,000 distinct ?model= filters', 'each filter past 64 cleared the cache', '≤ 50 ms p99, the plain body still cached', 'scale100k.filter_flood_healthz_p99', () => {
      const plain = find('scale100k.filter_flood_plain_cached')?.figure;
      return plain ? `; plain GET /pools after it: ${plain.shown ?? ''}${plain.target?.met ? '' : ' (NOT met)'}` : '';
    }),
  );
  rows.push(
    judgedRow('watch reconnect with Last-Event-ID', 'full resync', 'only the events since, within the replay window', 'scale100k.resume', ({ figure }) =>
      figure.ratio === undefined ? '' : ` (${percent(figure.ratio)} of a full resync's bytes)`,
    ),
  );

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
