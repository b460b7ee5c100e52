// The warnings of docs/contract.md §3 (README "Warnings (MCS modes)"): their fields and the text with the
// likely cause, and the join's source book, which says when the view is complete and when ready.
import { describe, expect, it } from 'vitest';
import type { PoolContext } from '../../machines/pool.machine.js';
import { SourceBook } from '../../src/join/sources.js';
import { frontendlessWarning, stuckWarning, WARNING_KINDS } from '../../src/join/warnings.js';
import type { Completeness } from '../../src/join/listed-view.js';

const context = (overrides: Partial<PoolContext> = {}): PoolContext =>
  ({ key: 'us-east-1/llm/llama-70b', mode: 'mcs', since: 0, frontendSlicesWithPort: false, ...overrides }) as PoolContext;
const NAMES = { frontendServiceSuffix: '-frontend', frontendPortName: 'http' };

describe('stuck warnings', () => {
  it.each([
    ['unregistered', 'MCS shows a Ready PoolRelay but no live registration was seen: its PoolRelays likely do not call POST /pools on this service with this key (cluster_id, namespace, name)'],
    ['one-sided', "its lease is live but MCS shows no Ready PoolRelay for this key: check that cluster_id is the pool's MCS cluster name and that its PoolRelay Service is exported"],
    ['lapsed', "its lease lapsed while MCS still shows a Ready PoolRelay endpoint: the pool's cluster has likely lost contact with the MCS implementation and the endpoint is stale"],
  ] as const)('%s: the pool, the state, since when, and the likely cause', (state, cause) => {
    expect(stuckWarning(context({ since: 1_764_460_000_000 }), state)).toEqual({
      fields: { pool: 'us-east-1/llm/llama-70b', state, since: '2025-11-29T23:46:40.000Z' },
      message: `pool us-east-1/llm/llama-70b ${state} for two lease durations: ${cause}`,
    });
  });
});

describe('frontendless warnings', () => {
  it('MCS modes, no slice with the port: the Service is likely not exported', () => {
    expect(frontendlessWarning(context(), NAMES)).toEqual({
      fields: { pool: 'us-east-1/llm/llama-70b', frontend_service: 'llama-70b-frontend', port_name: 'http', frontend_slices_with_port: false },
      message:
        'pool us-east-1/llm/llama-70b is listed without frontends: MCS imports no slice of llama-70b-frontend with port "http", usually because the Service is not exported',
    });
  });

  it('MCS modes, slices with the port: no frontend pod is Ready', () => {
    const warning = frontendlessWarning(context({ frontendSlicesWithPort: true }), { frontendServiceSuffix: '-fe', frontendPortName: 'web' });
    expect(warning.fields).toEqual({ pool: 'us-east-1/llm/llama-70b', frontend_service: 'llama-70b-fe', port_name: 'web', frontend_slices_with_port: true });
    expect(warning.message).toBe(
      'pool us-east-1/llm/llama-70b is listed without frontends: MCS imports slices of llama-70b-fe with port "web" but none of their endpoints is Ready',
    );
  });

  it('registrations mode: the registration lists none', () => {
    expect(frontendlessWarning(context({ mode: 'registrations' }), NAMES)).toEqual({
      fields: { pool: 'us-east-1/llm/llama-70b', state: 'frontendless', frontend_service: null, port_name: null, frontend_slices_with_port: null },
      message: 'pool us-east-1/llm/llama-70b is listed without frontends: its registration lists no frontends, so routers have nowhere to send its requests',
    });
  });

  it('a key without a name part names the Service by the suffix alone', () => {
    expect(frontendlessWarning(context({ key: 'c/n' }), NAMES).fields.frontend_service).toBe('-frontend');
  });

  it('the kinds counted by the metrics', () => {
    expect(WARNING_KINDS).toEqual(['stuck_unregistered', 'stuck_one_sided', 'stuck_lapsed', 'frontendless', 'frontend_slice_without_port']);
  });
});

describe('SourceBook', () => {
  function book(regions?: () => never[]) {
    const changes: Completeness[] = [];
    const sources = new SourceBook({ onChange: (c) => changes.push(c), ...(regions ? { regions } : {}) });
    return { sources, changes };
  }

  it('complete only when every source is synced; each other source gives its reason, or a default one', () => {
    const { sources, changes } = book();
    sources.add({ name: 'store', synced: false, reason: 'store: not read yet' });
    sources.add({ name: 'kubernetes', synced: false });
    expect(changes).toEqual([]);
    sources.publish();
    expect(changes.at(-1)).toEqual({ complete: false, reasons: ['store: not read yet', 'kubernetes: not synced'] });
    sources.set({ name: 'store', synced: true });
    expect(changes.at(-1)).toEqual({ complete: false, reasons: ['kubernetes: not synced'] });
    sources.set({ name: 'kubernetes', synced: true });
    expect(changes.at(-1)).toEqual({ complete: true, reasons: [] });
    expect('regions' in changes.at(-1)!).toBe(false);
  });

  it('the sources named were each synced once, even if one is not synced now (the warm-up, a followed region are not named)', () => {
    const { sources } = book();
    sources.add({ name: 'store', synced: false });
    sources.add({ name: 'warmup', synced: false });
    sources.add({ name: 'region:far', synced: false });
    expect(sources.everSyncedAll(['store'])).toBe(false);
    sources.set({ name: 'store', synced: true });
    expect(sources.everSyncedAll(['store'])).toBe(true);
    expect(sources.everSyncedAll(['store', 'region:far'])).toBe(false);
    sources.set({ name: 'store', synced: false, reason: 'store cannot be read: timeout' });
    expect(sources.everSyncedAll(['store'])).toBe(true);
    expect(sources.has('warmup')).toBe(true);
    expect(sources.has('kubernetes')).toBe(false);
    expect(sources.get('store')).toEqual({ name: 'store', synced: false, reason: 'store cannot be read: timeout' });
  });

  it('statuses are copies', () => {
    const { sources } = book();
    sources.add({ name: 'store', synced: false });
    const [status] = sources.statuses();
    status!.synced = true;
    expect(sources.get('store')!.synced).toBe(false);
    expect(sources.statuses()).toEqual([{ name: 'store', synced: false }]);
  });

  it('with regions, every change carries their entries', () => {
    const { sources, changes } = book(() => []);
    sources.add({ name: 'region:a', synced: true });
    sources.publish();
    expect(changes.at(-1)).toEqual({ complete: true, reasons: [], regions: [] });
  });
});
