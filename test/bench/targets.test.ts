// The targets table of BENCHMARKS.md (bench/report/targets.ts): each row read from the run's figures,
// judged against the round's targets, with etcd's figure beside the comparable rows.
import { describe, expect, it } from 'vitest';
import { targetRows } from '../../bench/report/targets.js';
import { checked, informational, judged, type BenchRun, type Figure, type PartName, type PartResult } from '../../bench/report/types.js';

function part(name: PartName, figures: Figure[], extra: Partial<PartResult> = {}): PartResult {
  return { part: name, title: name, method: '', figures, details: {}, durationMs: 0, loadAverageAtStart: 0, ...extra };
}

function runOf(parts: PartResult[]): BenchRun {
  const machine = { nproc: 2, cpuModel: '', memoryGiB: 1, node: '', redis: '', os: '', loadAverageStart: 0, gitCommit: '', gitDirty: false };
  return { startedAt: '', finishedAt: '', command: '', quick: false, machine, parts, failures: [] };
}

const ms = (id: string, value: number) => informational({ id, label: id, value, unit: 'ms' });

function rowOf(run: BenchRun, measure: string) {
  const row = targetRows(run).find((r) => r.measure.startsWith(measure));
  if (!row) throw new Error(`no row ${measure}`);
  return row;
}

describe('targets table', () => {
  it('says "not measured" for every row of an empty run', () => {
    const rows = targetRows(runOf([]));
    expect(rows).toHaveLength(16);
    expect(rows.every((r) => r.result === 'not measured' && r.now === 'not measured')).toBe(true);
  });

  it('judges /healthz during the filter flood against 50 ms p99, and says how the plain list fared', () => {
    const flood = (p99: number, plainMet: boolean) =>
      part('scale100k', [
        judged({ id: 'scale100k.filter_flood_healthz_p99', label: '', value: p99, unit: 'ms', reference: { label: 'target', value: 50, unit: 'ms' }, comparison: 'at-most', threshold: 1, targetText: '' }),
        checked({ id: 'scale100k.filter_flood_plain_cached', label: '', value: 40, unit: 'ms', shown: 'same ETag, 40 ms', targetText: '', met: plainMet }),
      ]);
    const met = rowOf(runOf([flood(50, true)]), 'GET /healthz during 1,000 distinct');
    expect(met.result).toBe('met');
    expect(met.now).toContain('plain GET /pools after it: same ETag, 40 ms');
    expect(met.now).not.toContain('NOT met');
    expect(rowOf(runOf([flood(50.1, true)]), 'GET /healthz during 1,000 distinct').result).toBe('NOT met');
    expect(rowOf(runOf([flood(20, false)]), 'GET /healthz during 1,000 distinct').now).toContain('(NOT met)');
  });

  it("judges convergence p99 against etcd's put → watch p99 of the same run, the one-hop floor beside it", () => {
    const convergence = (p99: number) => part('convergence', [ms('convergence.p99', p99), ms('convergence.floor_p99', 4)]);
    const etcd = part('etcd', [ms('etcd.put_watch_p99', 5)]);
    const met = rowOf(runOf([convergence(5), etcd]), 'POST on A');
    expect(met.result).toBe('met');
    expect(met.now).toContain('1.25 × one hop');
    expect(met.now).toContain("1.00 × etcd's");
    expect(met.etcd).toContain('1.25 × one hop');
    expect(rowOf(runOf([convergence(5.1), etcd]), 'POST on A').result).toBe('NOT met');
    // Without etcd in the run there is nothing to judge against.
    expect(rowOf(runOf([convergence(1)]), 'POST on A').result).toBe('not measured');
  });

  it('needs both the lapse max and p99 within bounds', () => {
    const lapse = (max: number, p99: number) => part('lapse', [ms('lapse.max', max), ms('lapse.p99', p99)]);
    expect(rowOf(runOf([lapse(250, 150)]), 'lapse').result).toBe('met');
    expect(rowOf(runOf([lapse(251, 100)]), 'lapse').result).toBe('NOT met');
    expect(rowOf(runOf([lapse(200, 151)]), 'lapse').result).toBe('NOT met');
    expect(rowOf(runOf([lapse(200, 100)]), 'lapse').etcd).toBe('not measured');
    const etcd = part('etcd', [ms('etcd.lapse_max', 500), ms('etcd.lapse_p99', 400)]);
    expect(rowOf(runOf([lapse(250, 100), etcd]), 'lapse').etcd).toContain('poolscope max 0.50 ×, p99 0.25 × etcd');
  });

  it('needs the CPU per heartbeat within 1.5 × the raw echo, the Hono echo beside it', () => {
    const heartbeat = (cpu: number) =>
      part('heartbeat', [
        informational({ id: 'heartbeat.replica_cpu', label: '', value: cpu, unit: 'µs', reference: { label: 'raw echo', value: 40, unit: 'µs' } }),
        informational({ id: 'heartbeat.hono_echo_cpu', label: '', value: 55, unit: 'µs' }),
      ]);
    expect(rowOf(runOf([heartbeat(60)]), 'replica CPU').result).toBe('met');
    expect(rowOf(runOf([heartbeat(60.1)]), 'replica CPU').result).toBe('NOT met');
    expect(rowOf(runOf([heartbeat(60)]), 'replica CPU').now).toContain('the Hono echo 55');
  });

  it('judges each replica of the fleet: the event-loop p99 row is met only when both are', () => {
    const p99 = (name: string, value: number) =>
      judged({ id: `fleet.${name}.loop_p99`, label: '', value, unit: 'ms', reference: { label: 'target', value: 10, unit: 'ms' }, comparison: 'at-most', threshold: 1, targetText: '' });
    expect(rowOf(runOf([part('fleet', [p99('A', 3), p99('B', 10)])]), 'fleet: event-loop').result).toBe('met');
    expect(rowOf(runOf([part('fleet', [p99('A', 3), p99('B', 10.5)])]), 'fleet: event-loop').result).toBe('NOT met');
    expect(rowOf(runOf([part('fleet', [p99('A', 3)])]), 'fleet: event-loop').result).toBe('not measured');
  });

  it('reports an encoding the replica did not apply as not compressed', () => {
    const bytes = (encoding: string, value: number) =>
      judged({ id: `scale100k.${encoding}_bytes`, label: '', value, unit: 'KiB', reference: { label: 'identity', value: 100, unit: 'KiB' }, comparison: 'at-most', threshold: 0.25, targetText: '' });
    const scale100k = (answered: string, gzipKiB: number) =>
      part('scale100k', [bytes('gzip', gzipKiB), bytes('br', 10)], { details: { encodings: { gzip: { encoding: answered }, br: { encoding: 'br' } } } });
    const compressed = rowOf(runOf([scale100k('gzip', 20)]), 'GET /pools with Accept-Encoding');
    expect(compressed.result).toBe('met');
    expect(compressed.now).toContain('gzip: 20 % of identity');
    const plain = rowOf(runOf([scale100k('identity', 100)]), 'GET /pools with Accept-Encoding');
    expect(plain.result).toBe('NOT met');
    expect(plain.now).toContain('gzip: not compressed (answered identity)');
  });

  it('names the size a part ran at when it is not the row\'s', () => {
    const figure = judged({ id: 'scale100k.new_replica_complete', label: '', value: 900, unit: 'ms', reference: { label: 'target', value: 3000, unit: 'ms' }, comparison: 'at-most', threshold: 1, targetText: '' });
    const at = (title: string) => rowOf(runOf([part('scale100k', [figure], { title })]), 'new replica, 100,000 pools').now;
    expect(at('5,000 pools')).toBe('900 ms (at 5,000 pools)');
    expect(at('100,000 pools')).toBe('900 ms');
  });

  it('shows a checked figure in its own words and says when the etcd part was skipped', () => {
    const figure = checked({ id: 'scale100k.if_none_match', label: '', value: 304, unit: '', shown: '304, 0 bytes', targetText: '', met: true });
    const lapse = part('lapse', [ms('lapse.max', 100), ms('lapse.p99', 90)]);
    const run = runOf([part('scale100k', [figure]), lapse, part('etcd', [], { skipped: 'etcd not found' })]);
    expect(rowOf(run, 'GET /pools with If-None-Match')).toMatchObject({ now: '304, 0 bytes', result: 'met' });
    expect(rowOf(run, 'lapse').etcd).toBe('skipped (etcd not installed)');
  });
});
