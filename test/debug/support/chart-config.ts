// The states and transitions of a machine, read straight from its config object (what
// `machines/*.machine.ts` wrote), as comparable strings: independent of xstate's StateNode API and of
// src/debug, so a drawing can be checked against the definition itself.
import type { AnyStateMachine } from 'xstate';

interface StateConfig {
  on?: Record<string, unknown>;
  always?: unknown;
  after?: Record<string, unknown>;
  states?: Record<string, StateConfig>;
}

export interface ChartSets {
  /** State keys. */
  states: Set<string>;
  /** `source → target on trigger [guard]`; source '' is the root; target '' is targetless; trigger is
   * the event, `always`, or `after:<delay>`. */
  transitions: Set<string>;
  /** How many transitions have a target (drawn as arrows). */
  targeted: number;
}

export function chartFromConfig(machine: AnyStateMachine): ChartSets {
  const states = new Set<string>();
  const transitions = new Set<string>();
  let targeted = 0;
  const add = (source: string, t: unknown, trigger: string) => {
    const { text, target } = describe(source, t, trigger);
    transitions.add(text);
    if (target) targeted += 1;
  };
  const walk = (config: StateConfig, source: string): void => {
    for (const [event, value] of Object.entries(config.on ?? {})) {
      for (const t of toArray(value)) add(source, t, event);
    }
    for (const t of toArray(config.always)) add(source, t, 'always');
    for (const [delay, value] of Object.entries(config.after ?? {})) {
      for (const t of toArray(value)) add(source, t, `after:${delay}`);
    }
    for (const [key, child] of Object.entries(config.states ?? {})) {
      states.add(key);
      walk(child, key);
    }
  };
  walk(machine.config as StateConfig, '');
  return { states, transitions, targeted };
}

export function transitionString(source: string, target: string, trigger: string, guard: string): string {
  return `${source} → ${target} on ${trigger} [${guard}]`;
}

function describe(source: string, t: unknown, trigger: string): { text: string; target: string } {
  const config = (typeof t === 'string' ? { target: t } : t) as { target?: string | string[]; guard?: unknown };
  const first = toArray(config.target)[0];
  const target = typeof first === 'string' ? lastSegment(first) : '';
  const guard = typeof config.guard === 'string' ? config.guard : ((config.guard as { type?: string } | undefined)?.type ?? '');
  return { text: transitionString(source, target, trigger, guard), target };
}

function lastSegment(target: string): string {
  return target.slice(target.lastIndexOf('.') + 1).replace(/^#/, '');
}

function toArray(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
