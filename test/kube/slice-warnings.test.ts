// The slice warnings of README "Warnings (MCS modes)": a naming warning logged once per entry into its
// condition, with the slice, the pool when the slice is used, and the reason; the frontend-port warning
// with its port name, counted; and when two reads of a pool's endpoints count as the same.
import { describe, expect, it } from 'vitest';
import { PoolSliceView, sameEndpoints } from '../../src/kube/slice-view.js';
import type { EndpointSlice } from '../../src/kube/slice.js';
import { captureLogs } from '../support/logs.js';
import { DEFAULT_SUFFIXES, fixtureSlice, version } from './helpers.js';

function newView() {
  const { logger, warnings } = captureLogs();
  const counted: string[] = [];
  const view = new PoolSliceView({ mode: 'karmada', ...DEFAULT_SUFFIXES, frontendPortName: 'http', logger, onWarning: (kind) => counted.push(kind) });
  return { view, warnings, counted };
}

const edited = (path: string, resourceVersion: string, change: (m: EndpointSlice['metadata']) => void) =>
  version(fixtureSlice(path), resourceVersion, (copy) => change(copy.metadata));

// Used, with a warning: the annotation names another cluster than the name.
const renamed = (rv: string) =>
  edited('karmada/cp-relay-ready.json', rv, (m) => {
    m.name = 'imported-member-eu-west-2-llama-70b-pool-relay-x7k2q';
  });
// Skipped, with a warning: no derived- prefix.
const underived = (rv: string) =>
  edited('karmada/cp-relay-ready.json', rv, (m) => {
    m.labels!['kubernetes.io/service-name'] = 'llama-70b-pool-relay';
  });
const ID = 'dynamo/imported-member-eu-west-2-llama-70b-pool-relay-x7k2q';

describe('naming warnings', () => {
  it('a used slice: logged once with the slice, the pool and the reason', () => {
    const { view, warnings } = newView();
    view.apply({ type: 'ADDED', slice: renamed('1') });
    view.apply({ type: 'MODIFIED', slice: renamed('2') });
    const reason = 'slice name does not start with imported-member-us-east-1-; using the cluster of annotation work.karmada.io/namespace';
    expect(warnings()).toEqual([
      expect.objectContaining({ slice: ID, pool: 'member-us-east-1/dynamo/llama-70b', reason, msg: `EndpointSlice used: ${reason}` }),
    ]);
  });

  it('a skipped slice: logged once with the slice and the reason, without a pool', () => {
    const { view, warnings } = newView();
    view.apply({ type: 'ADDED', slice: underived('1') });
    view.apply({ type: 'MODIFIED', slice: underived('2') });
    const reason = 'Karmada-imported slice whose service-name label "llama-70b-pool-relay" lacks "derived-"';
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ slice: 'dynamo/imported-member-us-east-1-llama-70b-pool-relay-x7k2q', reason, msg: `EndpointSlice skipped: ${reason}` });
    expect(warnings()[0]).not.toHaveProperty('pool');
  });

  it('a silent skip logs nothing', () => {
    const { view, warnings } = newView();
    const router = edited('karmada/cp-relay-ready.json', '1', (m) => {
      m.labels!['kubernetes.io/service-name'] = 'derived-global-router';
    });
    view.apply({ type: 'ADDED', slice: router });
    expect(warnings()).toEqual([]);
  });

  it('logged again once the condition ended and came back', () => {
    const { view, warnings } = newView();
    view.apply({ type: 'ADDED', slice: renamed('1') });
    // The annotation now agrees with the name: no warning.
    view.apply({ type: 'MODIFIED', slice: version(renamed('2'), '2', (copy) => void (copy.metadata.annotations!['work.karmada.io/namespace'] = 'karmada-es-member-eu-west-2')) });
    view.apply({ type: 'MODIFIED', slice: renamed('3') });
    expect(warnings()).toHaveLength(2);
  });

  it('logged again after the slice was deleted and added back', () => {
    const { view, warnings } = newView();
    view.apply({ type: 'ADDED', slice: renamed('1') });
    view.apply({ type: 'DELETED', slice: renamed('1') });
    view.apply({ type: 'ADDED', slice: renamed('2') });
    expect(warnings()).toHaveLength(2);
  });

  it('a relist keeps the warning of a slice still listed and forgets one gone', () => {
    const { view, warnings } = newView();
    view.relist([renamed('1')]);
    view.relist([renamed('1')]);
    expect(warnings()).toHaveLength(1);
    view.relist([]);
    view.relist([renamed('2')]);
    expect(warnings()).toHaveLength(2);
  });
});

describe('the frontend-port warning', () => {
  it('names the port and is counted, once per slice', () => {
    const { view, warnings, counted } = newView();
    const mistral = fixtureSlice('karmada/cp-frontend-other-port-name.json');
    view.apply({ type: 'ADDED', slice: mistral });
    view.apply({ type: 'MODIFIED', slice: version(mistral, '99') });
    expect(warnings()).toEqual([
      expect.objectContaining({
        port_name: 'http',
        msg: 'frontend EndpointSlice has no TCP port named "http": its endpoints are not listed as frontends',
      }),
    ]);
    expect(counted).toEqual(['frontend_slice_without_port']);
    expect(view.sliceCount).toBe(1);
  });
});

describe('without a warning counter', () => {
  it('the frontend-port warning is still logged', () => {
    const { logger, warnings } = captureLogs();
    const view = new PoolSliceView({ mode: 'karmada', ...DEFAULT_SUFFIXES, frontendPortName: 'http', logger });
    view.apply({ type: 'ADDED', slice: fixtureSlice('karmada/cp-frontend-other-port-name.json') });
    expect(warnings()).toHaveLength(1);
  });
});

describe('sameEndpoints', () => {
  const endpoints = { relays: ['r1'], frontends: ['f1', 'f2'], frontendSlicesWithPort: true };
  it('is true only when every part is equal', () => {
    expect(sameEndpoints(endpoints, structuredClone(endpoints))).toBe(true);
    expect(sameEndpoints(null, null)).toBe(true);
    expect(sameEndpoints(endpoints, null)).toBe(false);
    expect(sameEndpoints(null, endpoints)).toBe(false);
    expect(sameEndpoints(endpoints, { ...endpoints, frontendSlicesWithPort: false })).toBe(false);
    expect(sameEndpoints(endpoints, { ...endpoints, relays: ['r2'] })).toBe(false);
    expect(sameEndpoints(endpoints, { ...endpoints, relays: [] })).toBe(false);
    expect(sameEndpoints(endpoints, { ...endpoints, frontends: ['f1', 'f3'] })).toBe(false);
    expect(sameEndpoints(endpoints, { ...endpoints, frontends: ['f3', 'f2'] })).toBe(false);
    expect(sameEndpoints(endpoints, { ...endpoints, frontends: ['f1'] })).toBe(false);
    expect(sameEndpoints({ ...endpoints, frontends: [] }, { ...endpoints, frontends: ['f1'] })).toBe(false);
  });
});
