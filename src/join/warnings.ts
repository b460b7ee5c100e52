// The warnings of docs/contract.md §3: text with the likely cause first, and the fields the contract names.
import type { PoolContext } from '../../machines/pool.machine.js';

export type WarningKind = 'stuck_unregistered' | 'stuck_one_sided' | 'stuck_lapsed' | 'frontendless' | 'frontend_slice_without_port';

export const WARNING_KINDS: readonly WarningKind[] = [
  'stuck_unregistered',
  'stuck_one_sided',
  'stuck_lapsed',
  'frontendless',
  'frontend_slice_without_port',
];

const STUCK_CAUSE = {
  lapsed:
    "its lease lapsed while MCS still shows a Ready PoolRelay endpoint: the pool's cluster has likely lost contact with the MCS implementation and the endpoint is stale",
  unregistered:
    "MCS shows a Ready PoolRelay but no live registration was seen: its PoolRelays likely do not call POST /pools on this service with this key (cluster_id, namespace, name)",
  'one-sided':
    "its lease is live but MCS shows no Ready PoolRelay for this key: check that cluster_id is the pool's MCS cluster name and that its PoolRelay Service is exported",
} as const;

export function stuckWarning(
  context: PoolContext,
  state: 'unregistered' | 'one-sided' | 'lapsed',
): { fields: Record<string, unknown>; message: string } {
  return {
    fields: { pool: context.key, state, since: new Date(context.since).toISOString() },
    message: `pool ${context.key} ${state} for two lease durations: ${STUCK_CAUSE[state]}`,
  };
}

export function frontendlessWarning(
  context: PoolContext,
  names: { frontendServiceSuffix: string; frontendPortName: string },
): { fields: Record<string, unknown>; message: string } {
  const name = context.key.split('/')[2] ?? '';
  if (context.mode === 'registrations') {
    return {
      fields: { pool: context.key, state: 'frontendless', frontend_service: null, port_name: null, frontend_slices_with_port: null },
      message: `pool ${context.key} is listed without frontends: its registration lists no frontends, so routers have nowhere to send its requests`,
    };
  }
  const frontendService = `${name}${names.frontendServiceSuffix}`;
  const cause = context.frontendSlicesWithPort
    ? `MCS imports slices of ${frontendService} with port "${names.frontendPortName}" but none of their endpoints is Ready`
    : `MCS imports no slice of ${frontendService} with port "${names.frontendPortName}", usually because the Service is not exported`;
  return {
    fields: {
      pool: context.key,
      frontend_service: frontendService,
      port_name: names.frontendPortName,
      frontend_slices_with_port: context.frontendSlicesWithPort,
    },
    message: `pool ${context.key} is listed without frontends: ${cause}`,
  };
}
