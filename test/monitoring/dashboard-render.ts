// Draws deploy/grafana/poolscope.json as a static HTML page, for the screenshot README shows: each panel
// at its grid position, its queries' ranges (from Prometheus's query_range API) as Grafana would show
// them (time series as lines with a legend, stats as their last value, the heatmap as buckets over
// time). No Grafana here: the point is to show the dashboard's queries on real data, not Grafana's look.

export interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string; legendFormat?: string; format?: string }[];
  fieldConfig?: { defaults?: { unit?: string; thresholds?: { steps: { color: string; value: number | null }[] } } };
}

export interface Series {
  name: string;
  labels: Record<string, string>;
  points: [number, number][];
}

const COLORS = ['#7eb26d', '#eab839', '#6ed0e0', '#ef843c', '#e24d42', '#1f78c1', '#ba43a9', '#705da0', '#508642', '#cca300'];
const COLUMN = 1400 / 24;
const ROW = 30;

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** `{{label}}` of a legend format filled from a series' labels. */
export const legendOf = (format: string | undefined, labels: Record<string, string>) =>
  (format ?? '').replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => labels[name] ?? '') || JSON.stringify(labels);

function formatValue(value: number, unit: string | undefined): string {
  if (!Number.isFinite(value)) return '–';
  if (unit === 's') return value < 1 ? `${(value * 1000).toPrecision(3)} ms` : `${value.toPrecision(3)} s`;
  const text = Math.abs(value) >= 100 || Number.isInteger(value) ? value.toFixed(0) : value.toPrecision(3);
  return unit === 'reqps' ? `${text} req/s` : unit === 'ops' ? `${text}/s` : text;
}

function timeseries(panel: Panel, series: Series[], range: [number, number], width: number, height: number): string {
  const unit = panel.fieldConfig?.defaults?.unit;
  const values = series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite);
  const max = Math.max(1e-9, ...values);
  const min = Math.min(0, ...values);
  const left = 60;
  const legendWidth = Math.min(260, width * 0.35);
  const plotW = width - left - legendWidth - 10;
  const plotH = height - 30;
  const x = (t: number) => left + ((t - range[0]) / (range[1] - range[0])) * plotW;
  const y = (v: number) => 5 + plotH - ((v - min) / (max - min)) * plotH;
  const lines = series.map((s, i) => {
    const path = s.points.filter(([, v]) => Number.isFinite(v)).map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`);
    return `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.5" points="${path.join(' ')}"/>`;
  });
  const grid = [0, 0.5, 1].map((f) => {
    const v = min + f * (max - min);
    return `<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#333"/><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${escape(formatValue(v, unit))}</text>`;
  });
  const ticks = [0, 0.5, 1].map((f) => {
    const t = range[0] + f * (range[1] - range[0]);
    return `<text x="${x(t)}" y="${plotH + 22}" text-anchor="${['start', 'middle', 'end'][f * 2]}">${new Date(t * 1000).toISOString().slice(11, 19)}</text>`;
  });
  const legend = series
    .map((s, i) => {
      const last = [...s.points].reverse().find(([, v]) => Number.isFinite(v))?.[1] ?? NaN;
      return `<div class="legend"><i style="background:${COLORS[i % COLORS.length]}"></i><span>${escape(s.name)}</span><b>${escape(formatValue(last, unit))}</b></div>`;
    })
    .join('');
  const svg = `<svg width="${width - legendWidth}" height="${height}">${grid.join('')}${ticks.join('')}${lines.join('')}</svg>`;
  return series.length === 0 ? '<div class="nodata">No data</div>' : `<div class="ts">${svg}<div class="legends" style="width:${legendWidth}px">${legend}</div></div>`;
}

function stat(panel: Panel, series: Series[]): string {
  const value = series[0] ? ([...series[0].points].reverse().find(([, v]) => Number.isFinite(v))?.[1] ?? NaN) : NaN;
  const steps = panel.fieldConfig?.defaults?.thresholds?.steps ?? [];
  const color = [...steps].reverse().find((s) => s.value === null || value >= s.value)?.color ?? 'blue';
  const css = { green: '#37872d', red: '#c4162a', orange: '#fa6400', blue: '#1f60c4', text: '#444' }[color] ?? color;
  return `<div class="stat" style="background:${css}">${escape(formatValue(value, panel.fieldConfig?.defaults?.unit))}</div>`;
}

function heatmap(series: Series[], width: number, height: number): string {
  // Cumulative `le` buckets → per-bucket counts at each time, drawn as cells (darker: more commands).
  const buckets = series
    .map((s) => ({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), label: s.labels.le!, points: new Map(s.points) }))
    .sort((a, b) => a.le - b.le);
  const times = [...new Set(series.flatMap((s) => s.points.map(([t]) => t)))].sort((a, b) => a - b);
  if (buckets.length === 0 || times.length === 0) return '<div class="nodata">No data</div>';
  const counts = buckets.map((b, i) => times.map((t) => Math.max(0, (b.points.get(t) ?? 0) - (i > 0 ? (buckets[i - 1]!.points.get(t) ?? 0) : 0))));
  const max = Math.max(1e-9, ...counts.flat());
  const left = 60;
  const cellW = (width - left - 10) / times.length;
  const cellH = (height - 10) / buckets.length;
  const cells = counts.flatMap((row, i) =>
    row.map((c, j) =>
      c > 0
        ? `<rect x="${left + j * cellW}" y="${height - 10 - (i + 1) * cellH}" width="${cellW + 0.5}" height="${cellH - 1}" fill="#ef843c" fill-opacity="${(0.15 + 0.85 * (c / max)).toFixed(2)}"/>`
        : '',
    ),
  );
  const labels = buckets.map((b, i) => `<text x="${left - 6}" y="${height - 10 - i * cellH - cellH / 2 + 4}" text-anchor="end">${b.label === '+Inf' ? '+Inf' : formatValue(b.le, 's')}</text>`);
  return `<svg width="${width}" height="${height}">${labels.join('')}${cells.join('')}</svg>`;
}

/** The page: every panel of `panels` drawn from `data` (series per panel id) over `range` (unix seconds). */
export function renderDashboard(title: string, panels: Panel[], data: Map<number, Series[]>, range: [number, number]): string {
  const boxes = panels.map((panel) => {
    const { x, y, w, h } = panel.gridPos;
    const style = `left:${x * COLUMN}px;top:${y * ROW}px;width:${w * COLUMN - 6}px;height:${h * ROW - 6}px`;
    if (panel.type === 'row') return `<h2 style="${style}">${escape(panel.title)}</h2>`;
    const series = data.get(panel.id) ?? [];
    const width = w * COLUMN - 18;
    const height = h * ROW - 40;
    const body = panel.type === 'stat' ? stat(panel, series) : panel.type === 'heatmap' ? heatmap(series, width, height) : timeseries(panel, series, range, width, height);
    return `<section data-panel="${escape(panel.title)}" style="${style}"><h3>${escape(panel.title)}</h3>${body}</section>`;
  });
  const bottom = Math.max(...panels.map((p) => p.gridPos.y + p.gridPos.h)) * ROW;
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body { margin: 0; background: #111217; color: #ccccdc; font: 12px Inter, Helvetica, Arial, sans-serif; }
    header { padding: 10px 14px; font-size: 16px; } header small { color: #8e8e9e; font-size: 12px; margin-left: 12px; }
    main { position: relative; height: ${bottom}px; margin: 0 8px; }
    section, h2 { position: absolute; box-sizing: border-box; margin: 0; }
    section { background: #181b1f; border: 1px solid #2c3235; border-radius: 2px; padding: 4px 6px; overflow: hidden; }
    h2 { font-size: 14px; padding-top: 6px; } h3 { margin: 0 0 4px; font-size: 12px; font-weight: 500; }
    svg text { fill: #8e8e9e; font-size: 10px; }
    .ts { display: flex; } .legends { overflow: hidden; padding-left: 6px; }
    .legend { display: flex; gap: 6px; align-items: center; white-space: nowrap; line-height: 16px; }
    .legend i { width: 12px; height: 3px; flex: none; } .legend span { overflow: hidden; text-overflow: ellipsis; flex: 1; } .legend b { font-weight: 500; }
    .stat { height: calc(100% - 22px); display: flex; align-items: center; justify-content: center; font-size: 40px; color: #fff; border-radius: 2px; }
    .nodata { color: #8e8e9e; text-align: center; padding-top: 40px; }
  </style></head><body><header>${escape(title)}<small>${new Date(range[0] * 1000).toISOString().slice(11, 19)} – ${new Date(range[1] * 1000).toISOString().slice(11, 19)} UTC</small></header><main>${boxes.join('')}</main></body></html>`;
}
