import { describe, expect, it } from 'vitest';
import { PoolSliceView } from '../../src/kube/slice-view.js';
import { captureLogs } from '../support/logs.js';
import { DEFAULT_SUFFIXES, fixtureSlice, version } from './helpers.js';

const LLAMA = 'gpu-east-1/dynamo/llama-70b';
const MISTRAL = 'gpu-east-1/dynamo/mistral-7b';

function newView(mode: 'mcs' | 'karmada' = 'mcs') {
  const { logger, warnings } = captureLogs();
  const counted: string[] = [];
  const view = new PoolSliceView({
    mode,
    ...DEFAULT_SUFFIXES,
    frontendPortName: 'http',
    logger,
    onWarning: (kind) => counted.push(kind),
  });
  return { view, warnings, counted };
}

const relay = fixtureSlice('mcs/relay-ready.json');
const frontendV4 = fixtureSlice('mcs/frontend-ipv4.json');
const mistral = fixtureSlice('mcs/frontend-other-port-name.json');

describe('PoolSliceView', () => {
  it('reports a pool only when its endpoints change', () => {
    const { view } = newView();
    view.relist([relay]);
    expect(view.apply({ type: 'ADDED', slice: frontendV4 })).toEqual([
      { key: LLAMA, endpoints: { relays: ['http://10.12.3.41:9000'], frontends: ['http://10.12.5.17:8000'], frontendSlicesWithPort: true } },
    ]);
    // A new resourceVersion that moves no address (a label, serving) is no news.
    const moved = version(frontendV4, '9', (copy) => {
      copy.metadata.labels!['example.com/touched'] = 'yes';
      copy.endpoints![0]!.conditions = { ready: true, serving: false };
    });
    expect(view.apply({ type: 'MODIFIED', slice: moved })).toEqual([]);
  });

  it('a deleted frontend slice leaves the pool with frontends [], and its last slice with null', () => {
    const { view } = newView();
    view.relist([relay, frontendV4]);
    expect(view.apply({ type: 'DELETED', slice: frontendV4 })).toEqual([
      { key: LLAMA, endpoints: { relays: ['http://10.12.3.41:9000'], frontends: [], frontendSlicesWithPort: false } },
    ]);
    expect(view.apply({ type: 'DELETED', slice: relay })).toEqual([{ key: LLAMA, endpoints: null }]);
    expect(view.snapshot().size).toBe(0);
  });

  it('a relist returns the whole view, without what vanished', () => {
    const { view } = newView();
    view.relist([relay, mistral]);
    const pools = view.relist([relay]);
    expect([...pools.keys()]).toEqual([LLAMA]);
  });

  it('warns once per frontend slice without the named port, not on every event', () => {
    const { view, warnings, counted } = newView();
    view.relist([relay]);
    view.apply({ type: 'ADDED', slice: mistral });
    view.apply({ type: 'MODIFIED', slice: version(mistral, '2') });
    view.relist([relay, version(mistral, '3')]);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ pool: MISTRAL, slice: 'dynamo/mistral-7b-frontend-w2lck', port_name: 'http' });

    // Fixed, then broken again: a new entry into the condition, a new warning.
    const fixed = version(mistral, '4', (copy) => void (copy.ports = [{ name: 'http', protocol: 'TCP', port: 8000 }]));
    view.apply({ type: 'MODIFIED', slice: fixed });
    expect(warnings()).toHaveLength(1);
    view.apply({ type: 'MODIFIED', slice: version(mistral, '5') });
    expect(warnings()).toHaveLength(2);

    // Deleted and created again: warned again.
    view.apply({ type: 'DELETED', slice: version(mistral, '6') });
    view.apply({ type: 'ADDED', slice: version(mistral, '7') });
    expect(warnings()).toHaveLength(3);
    // Each of them counted once for poolscope_warnings_total{kind="frontend_slice_without_port"}.
    expect(counted).toEqual(['frontend_slice_without_port', 'frontend_slice_without_port', 'frontend_slice_without_port']);
  });

  it('warns once per slice skipped for a name that does not fit', () => {
    const { view, warnings } = newView('karmada');
    const unfit = version(fixtureSlice('karmada/cp-endpoint-ready-absent.json'), '1', (copy) => {
      copy.metadata.labels!['karmada.io/managed'] = 'true';
    });
    view.relist([unfit]);
    view.apply({ type: 'MODIFIED', slice: version(unfit, '2') });
    view.relist([version(unfit, '3')]);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ slice: 'dynamo/imported-member-us-east-1-gemma-27b-frontend-manual' });
    expect(view.snapshot().size).toBe(0);
  });
});
