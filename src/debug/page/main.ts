// The /debug page: reads the chart once (GET /debug/machine), then follows GET /debug/pools/watch: the
// pools, the selected one, the regions strip and the fleet overview (docs/contract.md §7).
// Selecting a pool reopens the stream with ?pool=<key>, so the server sends that pool's detail as it
// changes; nothing is polled. The selection lives in the URL (#pool=<key>) so a link opens it.
// The routers (docs/contract.md §10) follow GET /routers/watch, the routers' own stream, beside it.
import type { DebugRouterList, RouterWatchEvent } from '../../contract/router.js';
import type { ErrorBody } from '../../contract/errors.js';
import type { DebugPoolDetail, DebugStreamEvents, GraphTransition, MachineGraph } from '../types.js';
import { ChartView } from './chart.js';
import { byId, el } from './dom.js';
import { OverviewView } from './overview.js';
import { PoolDetailView } from './pool-detail.js';
import { PoolList } from './pool-list.js';
import { RegionsStrip } from './regions-strip.js';
import { RouterListView } from './router-list.js';

/** Server clock minus browser clock, from the `now_ms` of the last message. */
let clockOffset = 0;
const serverNow = () => Date.now() + clockOffset;

function selectedFromUrl(): string | null {
  const match = /^#pool=(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]!) : null;
}

async function start(): Promise<void> {
  followRouters(new RouterListView({ container: byId('routers') }));
  const response = await fetch('/debug/machine');
  if (!response.ok) throw new Error(`GET /debug/machine: ${response.status}`);
  const graph = (await response.json()) as MachineGraph;
  const chart = new ChartView(byId('chart'), graph);
  const transitions = new Map<string, GraphTransition>(graph.transitions.map((t) => [t.id, t]));
  let hasRegions = false;
  const detail = new PoolDetailView({ container: byId('detail'), transitions, serverNow, hasRegions: () => hasRegions });
  const strip = new RegionsStrip({ container: byId('regions'), serverNow });
  const overview = new OverviewView({ container: byId('overview') });
  let selected = selectedFromUrl();
  let source: EventSource | undefined;

  const showPool = (pool: DebugPoolDetail | null) => {
    detail.show(pool, selected);
    const last = pool?.history.at(-1);
    chart.highlight({
      current: pool?.state ?? null,
      last: last ? { id: last.cause.transition, from: last.from, to: last.to } : null,
    });
    document.body.dataset.selectedState = pool?.state ?? '';
  };

  const list = new PoolList({
    container: byId('groups'),
    count: byId('pool-count'),
    filter: byId<HTMLInputElement>('filter'),
    stateOrder: graph.states.map((s) => s.key),
    onSelect: (key) => {
      if (key === selected) return;
      history.replaceState(null, '', `#pool=${encodeURIComponent(key)}`);
      select(key);
    },
  });

  const connect = () => {
    source?.close();
    const query = selected ? `?pool=${encodeURIComponent(selected)}` : '';
    source = new EventSource(`/debug/pools/watch${query}`);
    const on = <K extends keyof DebugStreamEvents>(kind: K, handle: (data: DebugStreamEvents[K]) => void) =>
      source!.addEventListener(kind, (message) => handle(JSON.parse((message as MessageEvent<string>).data) as DebugStreamEvents[K]));
    on('snapshot', (data) => {
      clockOffset = data.now_ms - Date.now();
      setConnection('live');
      showCompleteness(data);
      hasRegions = data.regions !== null;
      strip.show(data.regions);
      overview.setRegions(data.regions);
      overview.show(data.overview);
      list.replace(data.pools);
      showPool(data.selected);
    });
    on('regions', (data) => {
      clockOffset = data.now_ms - Date.now();
      strip.show(data.regions);
      overview.setRegions(data.regions);
    });
    on('overview', (data) => {
      clockOffset = data.now_ms - Date.now();
      overview.show(data.overview);
    });
    on('pools', (data) => {
      clockOffset = data.now_ms - Date.now();
      list.apply(data.upserted, data.removed);
    });
    on('pool', (data) => {
      clockOffset = data.now_ms - Date.now();
      showPool(data.pool);
    });
    on('completeness', showCompleteness);
    // EventSource reconnects by itself; the server starts every stream with a full snapshot.
    source.addEventListener('error', () => setConnection('reconnecting'));
  };

  const select = (key: string | null) => {
    selected = key;
    list.select(key);
    connect();
  };

  window.addEventListener('hashchange', () => {
    const key = selectedFromUrl();
    if (key !== selected) select(key);
  });
  setInterval(() => {
    detail.tick();
    strip.tick();
  }, 200);
  select(selected);
}

type RouterEvents = { [E in RouterWatchEvent as E['kind']]: E['data'] } & { overloaded: ErrorBody; closing: { reason: string } };

/**
 * GET /routers/watch: a `resync` (the whole list), then `upsert` and `delete` per change, and a new
 * `resync` when completeness changes. EventSource reconnects by itself with Last-Event-ID, so the server
 * sends what changed since (or a resync) and the list held stays right. The stream carries `complete`
 * but not why; while incomplete, the reasons are read once per resync from GET /debug/routers.
 */
function followRouters(view: RouterListView): void {
  const source = new EventSource('/routers/watch');
  let asked = 0;
  // A stream refused by --max-watchers opens, says `overloaded`, ends, and is retried by EventSource.
  let refused = false;
  const on = <K extends keyof RouterEvents>(kind: K, handle: (data: RouterEvents[K]) => void) =>
    source.addEventListener(kind, (message) => handle(JSON.parse((message as MessageEvent<string>).data) as RouterEvents[K]));
  const askReasons = () => {
    const ask = ++asked;
    fetch('/debug/routers')
      .then((response) => (response.ok ? (response.json() as Promise<DebugRouterList>) : null))
      .then((list) => {
        if (list && ask === asked) view.setReasons(list.reasons);
      })
      .catch(() => undefined);
  };
  source.addEventListener('open', () => {
    refused = false;
    view.setStream('live');
  });
  on('resync', (list) => {
    view.setStream('live');
    view.replace(list);
    if (!list.complete) askReasons();
  });
  on('upsert', ({ router }) => view.upsert(router));
  on('delete', ({ router }) => view.remove(router.id));
  on('overloaded', (body) => {
    refused = true;
    view.setStream('refused', body.error.message);
  });
  on('closing', () => view.setStream('reconnecting'));
  source.addEventListener('error', () => {
    if (!refused) view.setStream('reconnecting');
  });
}

function setConnection(state: 'live' | 'reconnecting'): void {
  const badge = byId('connection');
  badge.dataset.connection = state;
  badge.textContent = state === 'live' ? 'live' : 'reconnecting…';
}

function showCompleteness(completeness: { complete: boolean; reasons: string[] }): void {
  const banner = byId('banner');
  banner.hidden = completeness.complete;
  document.body.dataset.complete = String(completeness.complete);
  banner.replaceChildren(
    el('strong', {}, 'Incomplete view: pools may be missing.'),
    el('ul', {}, ...completeness.reasons.map((reason) => el('li', {}, reason))),
  );
}

start().catch((error: unknown) => {
  const banner = byId('banner');
  banner.hidden = false;
  banner.textContent = `The page could not start: ${error instanceof Error ? error.message : String(error)}`;
});
