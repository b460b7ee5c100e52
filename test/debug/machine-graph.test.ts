// The chart served to /debug is the machine definition: the same states and transitions as the config
// `machines/pool.machine.ts` declares, and a state or transition added to a machine appears with it.
import { createMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { poolMachine } from '../../machines/pool.machine.js';
import { machineGraph } from '../../src/debug/machine-graph.js';
import type { MachineGraph } from '../../src/debug/types.js';
import { chartFromConfig, transitionString, type ChartSets } from './support/chart-config.js';

function setsOf(graph: MachineGraph): ChartSets {
  const key = (id: string) => (id === graph.id ? '' : id.slice(id.lastIndexOf('.') + 1));
  const transitions = graph.transitions.map((t) =>
    transitionString(key(t.source), t.target ? key(t.target) : '', t.kind === 'after' ? `after:${t.delay}` : t.kind === 'always' ? 'always' : t.event, t.guard ?? ''),
  );
  return {
    states: new Set(graph.states.map((s) => s.key)),
    transitions: new Set(transitions),
    targeted: graph.transitions.filter((t) => t.target !== null).length,
  };
}

describe('machineGraph', () => {
  it('has exactly the states and transitions of the pool machine config', () => {
    const graph = machineGraph(poolMachine);
    expect(setsOf(graph)).toEqual(chartFromConfig(poolMachine));
    expect(graph.initial).toBe('pool.absent');
    expect(new Set(graph.transitions.map((t) => t.id)).size).toBe(graph.transitions.length);
  });

  it('follows the definition: an added state and transitions appear', () => {
    const config = poolMachine.config as unknown as { states: Record<string, Record<string, unknown>> };
    const extended = createMachine(
      {
        ...(poolMachine.config as object),
        states: {
          ...config.states,
          live: { ...config.states.live, on: { DRAIN: { target: 'draining', guard: 'isLive' } } },
          draining: { on: { DRAINED: 'absent' }, after: { twoLeases: 'lapsed' } },
        },
      } as never,
      poolMachine.implementations as never,
    );
    const graph = machineGraph(extended);
    expect(setsOf(graph)).toEqual(chartFromConfig(extended));
    expect(graph.states.map((s) => s.key)).toContain('draining');
    expect(graph.transitions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: 'pool.live', target: 'pool.draining', event: 'DRAIN', guard: 'isLive', kind: 'event' }),
        expect.objectContaining({ source: 'pool.draining', target: 'pool.absent', event: 'DRAINED', kind: 'event' }),
        expect.objectContaining({ source: 'pool.draining', target: 'pool.lapsed', kind: 'after', delay: 'twoLeases', label: 'after twoLeases' }),
      ]),
    );
    expect(setsOf(graph).transitions.size).toBe(setsOf(machineGraph(poolMachine)).transitions.size + 3);
  });

  it('gives the same ids to a machine with provided implementations (as the join runs it)', () => {
    const provided = poolMachine.provide({ actions: { warnFrontendless: () => {} } });
    expect(machineGraph(provided)).toEqual(machineGraph(poolMachine));
  });
});
