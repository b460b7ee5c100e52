// The pool chart, drawn from GET /debug/machine (the machine definition as data) and laid out by dagre:
// one box per state, one arrow per targeted transition, targetless transitions listed inside their
// state's box (or under the chart for those every state takes). Every drawn transition carries its id,
// source, target, event and guard as data-* attributes, so what is drawn can be checked against the chart.
import dagre from '@dagrejs/dagre';
import type { GraphTransition, MachineGraph } from '../types.js';
import { svg } from './dom.js';

export interface ChartHighlight {
  /** The current state's key (`live`), or null for no pool. */
  current: string | null;
  /** The last transition taken: its id when known, and its ends. */
  last: { id: string | null; from: string; to: string } | null;
}

const CHAR_WIDTH = 7;
const LINE_HEIGHT = 15;
const INITIAL = '__initial';

interface Layout {
  width: number;
  height: number;
  nodes: Map<string, { x: number; y: number; width: number; height: number }>;
  edges: Map<string, { points: { x: number; y: number }[]; label: { x: number; y: number } }>;
}

export class ChartView {
  private readonly root: SVGSVGElement;
  private readonly byKey = new Map<string, string>();

  constructor(
    container: HTMLElement,
    private readonly graph: MachineGraph,
  ) {
    for (const state of graph.states) this.byKey.set(state.key, state.id);
    this.root = this.draw(layout(graph));
    container.replaceChildren(this.root);
  }

  highlight(highlight: ChartHighlight): void {
    const currentId = highlight.current === null ? null : (this.byKey.get(highlight.current) ?? null);
    for (const node of this.root.querySelectorAll<SVGGElement>('g.state')) {
      node.classList.toggle('current', node.dataset.stateId === currentId);
    }
    const last = highlight.last;
    const lastId = last ? (last.id ?? this.findTransition(last.from, last.to)) : null;
    for (const edge of this.root.querySelectorAll<SVGGElement>('g.transition')) {
      const on = edge.dataset.transitionId === lastId;
      edge.classList.toggle('last', on);
      const path = edge.querySelector('path');
      if (path && path.getAttribute('marker-end')) path.setAttribute('marker-end', on ? 'url(#arrow-last)' : 'url(#arrow)');
    }
  }

  /** The one targeted transition from → to (by state key), when there is exactly one. */
  private findTransition(from: string, to: string): string | null {
    const source = this.byKey.get(from);
    const target = this.byKey.get(to);
    const found = this.graph.transitions.filter((t) => t.source === source && t.target === target);
    return found.length === 1 ? found[0]!.id : null;
  }

  private draw(l: Layout): SVGSVGElement {
    const graph = this.graph;
    const rootNotes = graph.transitions.filter((t) => t.target === null && t.source === graph.id);
    const notesHeight = rootNotes.length > 0 ? LINE_HEIGHT * (rootNotes.length + 1) + 8 : 0;
    const width = Math.max(l.width, ...rootNotes.map((t) => CHAR_WIDTH * internalLabel(t).length + 40));
    const height = l.height + notesHeight;
    const root = svg('svg', {
      class: 'machine',
      viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`,
      width: Math.ceil(width),
      height: Math.ceil(height),
      role: 'img',
      'aria-label': `state chart of ${graph.id}`,
      'data-machine': graph.id,
    });
    root.append(
      svg(
        'defs',
        {},
        marker('arrow', 'arrowhead'),
        marker('arrow-last', 'arrowhead last'),
      ),
    );
    const edges = svg('g', { class: 'edges' });
    const nodes = svg('g', { class: 'nodes' });
    root.append(edges, nodes);

    const initial = l.nodes.get(INITIAL);
    if (initial) {
      nodes.append(svg('circle', { class: 'initial', cx: initial.x, cy: initial.y, r: 6 }));
      const edge = l.edges.get(INITIAL);
      if (edge) edges.append(svg('path', { class: 'initial-edge', d: pathOf(edge.points), 'marker-end': 'url(#arrow)' }));
    }
    for (const state of graph.states) {
      const box = l.nodes.get(state.id)!;
      const internal = graph.transitions.filter((t) => t.target === null && t.source === state.id);
      const x = box.x - box.width / 2;
      const y = box.y - box.height / 2;
      const group = svg(
        'g',
        { class: 'state', 'data-state': state.key, 'data-state-id': state.id },
        svg('title', {}, state.entry.length > 0 ? `${state.key}: entry / ${state.entry.join(', ')}` : state.key),
        svg('rect', { x, y, width: box.width, height: box.height, rx: 10, ry: 10 }),
        svg('text', { class: 'state-name', x: box.x, y: y + 20, 'text-anchor': 'middle' }, state.key),
      );
      internal.forEach((t, i) => {
        group.append(
          svg(
            'text',
            { class: 'internal', x: x + 10, y: y + 40 + i * LINE_HEIGHT, ...transitionData(t) },
            internalLabel(t),
          ),
        );
      });
      nodes.append(group);
    }
    for (const t of graph.transitions) {
      if (t.target === null) continue;
      const edge = l.edges.get(t.id)!;
      edges.append(
        svg(
          'g',
          { class: `transition ${t.kind}`, ...transitionData(t) },
          svg('path', { d: pathOf(edge.points), 'marker-end': 'url(#arrow)' }),
          svg('text', { class: 'edge-label', x: edge.label.x, y: edge.label.y + 4, 'text-anchor': 'middle' }, edgeLabel(t)),
        ),
      );
    }
    if (rootNotes.length > 0) {
      const notes = svg('g', { class: 'root-transitions' });
      notes.append(svg('text', { class: 'notes-title', x: 12, y: l.height + LINE_HEIGHT }, 'in every state:'));
      rootNotes.forEach((t, i) => {
        notes.append(svg('text', { class: 'internal', x: 24, y: l.height + LINE_HEIGHT * (i + 2), ...transitionData(t) }, internalLabel(t)));
      });
      root.append(notes);
    }
    return root;
  }
}

function layout(graph: MachineGraph): Layout {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 50, ranksep: 70, edgesep: 14, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  g.setNode(INITIAL, { width: 12, height: 12 });
  g.setEdge(INITIAL, graph.initial, { minlen: 1 }, INITIAL);
  for (const state of graph.states) {
    const internal = graph.transitions.filter((t) => t.target === null && t.source === state.id).map(internalLabel);
    const widest = Math.max(state.key.length * 9, ...internal.map((s) => s.length * CHAR_WIDTH));
    g.setNode(state.id, { width: widest + 28, height: 32 + internal.length * LINE_HEIGHT + (internal.length ? 6 : 0) });
  }
  for (const t of graph.transitions) {
    if (t.target === null) continue;
    const label = edgeLabel(t);
    g.setEdge(t.source, t.target, { width: label.length * 6.2 + 6, height: 14, labelpos: 'c' }, t.id);
  }
  dagre.layout(g);
  const nodes: Layout['nodes'] = new Map();
  for (const id of g.nodes()) {
    const n = g.node(id) as { x: number; y: number; width: number; height: number };
    nodes.set(id, { x: n.x, y: n.y, width: n.width, height: n.height });
  }
  const edges: Layout['edges'] = new Map();
  for (const e of g.edges() as { v: string; w: string; name?: string }[]) {
    const label = g.edge(e) as { points: { x: number; y: number }[]; x?: number; y?: number };
    const mid = label.points[Math.floor(label.points.length / 2)]!;
    edges.set(e.name ?? `${e.v}->${e.w}`, { points: label.points, label: { x: label.x ?? mid.x, y: label.y ?? mid.y } });
  }
  const size = g.graph() as { width?: number; height?: number };
  return { width: size.width ?? 400, height: size.height ?? 300, nodes, edges };
}

function transitionData(t: GraphTransition): Record<string, string> {
  return {
    'data-transition-id': t.id,
    'data-kind': t.kind,
    'data-source': t.source,
    'data-target': t.target ?? '',
    'data-event': t.event,
    'data-guard': t.guard ?? '',
    'data-delay': t.delay ?? '',
  };
}

/** Eventless edges show their guard only (the legend says so); others their event too. */
function edgeLabel(t: GraphTransition): string {
  const guard = t.guard ? `[${t.guard}]` : '';
  return t.kind === 'always' ? guard || 'always' : `${t.label}${guard ? ` ${guard}` : ''}`;
}

function internalLabel(t: GraphTransition): string {
  const guard = t.guard ? ` [${t.guard}]` : '';
  return `${t.label}${guard} / ${t.actions.join(', ') || '—'}`;
}

function marker(id: string, className: string): SVGMarkerElement {
  return svg(
    'marker',
    { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    svg('path', { class: className, d: 'M 0 0 L 10 5 L 0 10 z' }),
  );
}

/** A smooth path through dagre's points: straight ends, quadratic curves through the bends. */
function pathOf(points: { x: number; y: number }[]): string {
  if (points.length === 0) return '';
  const [first, ...rest] = points;
  let d = `M ${first!.x} ${first!.y}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i]!;
    const next = rest[i + 1]!;
    d += ` Q ${p.x} ${p.y} ${(p.x + next.x) / 2} ${(p.y + next.y) / 2}`;
  }
  const end = rest.at(-1) ?? first!;
  return `${d} L ${end.x} ${end.y}`;
}
