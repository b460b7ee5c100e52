// The chart as data, read from the machine definition itself (never drawn by hand): every state and
// every transition xstate built from `machines/pool.machine.ts`, so a state or transition added there
// shows up on /debug with no other change.
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import type { GraphState, GraphTransition, MachineGraph } from './types.js';

export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const states: GraphState[] = [];
  const transitions: GraphTransition[] = [];
  const visit = (node: AnyStateNode): void => {
    if (node.parent) states.push({ id: node.id, key: node.key, entry: ownActions(node.entry) });
    for (const transition of ownTransitions(node)) transitions.push(describeTransition(transition));
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  const initial = machine.root.initial?.target?.[0]?.id ?? states[0]?.id ?? machine.root.id;
  return { id: machine.root.id, initial, states, transitions };
}

/** A state's key from its id: `pool.live` → `live` (histories name states by key). */
export function stateKeyOf(id: string): string {
  return id.slice(id.lastIndexOf('.') + 1);
}

/** A transition's id: where it is declared and its place there. Any machine built from the same config
 * (e.g. after `machine.provide`) gives its transitions the same ids. */
export function transitionId(transition: AnyTransitionDefinition): string {
  const source = transition.source;
  if (transition.eventType === '') return `${source.id}|always|${(source.always ?? []).indexOf(transition)}`;
  const list = source.transitions.get(transition.eventType) ?? [];
  return `${source.id}|${transition.eventType}|${list.indexOf(transition)}`;
}

/** A node's transitions in declaration order: event and delayed ones, then eventless ones. */
function ownTransitions(node: AnyStateNode): AnyTransitionDefinition[] {
  return [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
}

function describeTransition(transition: AnyTransitionDefinition): GraphTransition {
  const delay = (transition as { delay?: unknown }).delay;
  const kind = transition.eventType === '' ? 'always' : delay !== undefined ? 'after' : 'event';
  const delayName = delay === undefined ? null : String(delay);
  return {
    id: transitionId(transition),
    kind,
    source: transition.source.id,
    target: transition.target?.[0]?.id ?? null,
    event: transition.eventType,
    label: kind === 'always' ? 'always' : kind === 'after' ? `after ${delayName}` : transition.eventType,
    guard: guardName(transition.guard),
    delay: delayName,
    actions: ownActions(transition.actions),
  };
}

export function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return guard.name || 'inline guard';
  if (typeof guard === 'object' && 'type' in guard) return String((guard as { type: unknown }).type);
  return 'guard';
}

/** Named actions, without the ones xstate adds itself (`xstate.raise` and `xstate.cancel` for delays). */
function ownActions(actions: readonly unknown[]): string[] {
  return actions.map(actionName).filter((name) => !name.startsWith('xstate.'));
}

function actionName(action: unknown): string {
  if (typeof action === 'string') return action;
  if (typeof action === 'function') {
    const type = (action as { type?: unknown }).type;
    return typeof type === 'string' ? type : action.name || 'inline action';
  }
  if (action && typeof action === 'object' && 'type' in action) return String((action as { type: unknown }).type);
  return 'action';
}
