// /debug/pools: every pool actor this replica holds (listed or not), its state, context and history,
// for operators asking why a pool is (not) listed.
import { Hono } from 'hono';
import type { PoolContext } from '../../machines/pool.machine.js';
import type { PoolState } from '../contract/index.js';
import type { Join } from '../join/join.js';
import { ApiError } from './errors.js';

export interface DebugPool {
  pool: string;
  state: PoolState;
  since: string;
  lease: PoolContext['lease'];
  lease_deadline_ms: number | null;
  registration: PoolContext['registration'];
  relays: string[];
  frontends: string[];
  frontend_slices_with_port: boolean | null;
  history: { at: string; event: string; from: PoolState; to: PoolState }[];
}

export function describePool(context: PoolContext, state: PoolState): DebugPool {
  return {
    pool: context.key,
    state,
    since: new Date(context.since).toISOString(),
    lease: context.lease,
    lease_deadline_ms: context.leaseDeadlineMs,
    registration: context.registration,
    relays: context.mode === 'registrations' ? (context.registration?.relay ? [context.registration.relay] : []) : context.relays,
    frontends: context.mode === 'registrations' ? (context.registration?.frontends ?? []) : context.mcsFrontends,
    frontend_slices_with_port: context.mode === 'registrations' ? null : context.frontendSlicesWithPort,
    history: context.history.map((h) => ({ ...h, at: new Date(h.at).toISOString() })),
  };
}

export function debugRoutes(join: Join): Hono {
  const one = (key: string) => {
    const actor = join.directory.get(key);
    if (!actor) throw new ApiError(404, 'not_found', `no pool ${key} on this replica`);
    const snapshot = actor.getSnapshot();
    return describePool(snapshot.context, snapshot.value as PoolState);
  };
  return new Hono()
    .get('/debug/pools', (c) => {
      const pools: DebugPool[] = [];
      for (const key of [...join.directory.keys()].sort()) pools.push(one(key));
      return c.json({ complete: join.view.complete, reasons: join.view.reasons, pools });
    })
    .get('/debug/pools/:cluster_id/:namespace/:name', (c) => {
      const { cluster_id, namespace, name } = c.req.param();
      return c.json(one(`${cluster_id}/${namespace}/${name}`));
    });
}
