// The probes (src/http/ops.ts) over a join in a state a test chooses: the join's getters are set by the
// test, the routes are the service's own, behind the app's error rendering. For tests of what each state
// answers (test/http/ops-answers.test.ts) and of those answers against the document.
import type { Hono } from 'hono';
import type { Join } from '../../src/join/join.js';
import type { SourceStatus } from '../../src/join/sources.js';
import { opsRoutes } from '../../src/http/ops.js';
import { withApiErrors } from './api-errors.js';

export interface JoinState {
  storeReadable?: { ok: boolean; reason?: string };
  sourceDown?: string;
  homeWindow?: { last_outage_ended: string; renewal_window_open: boolean };
  ready?: boolean;
  readinessSources?: string[];
  sourceStatuses?: SourceStatus[];
}

/** The probes over a join in the given state (every getter healthy and ready unless set). */
export function probes(state: JoinState): Hono {
  const join = {
    storeReadable: state.storeReadable ?? { ok: true },
    sourceDown: state.sourceDown,
    homeWindow: state.homeWindow,
    ready: state.ready ?? true,
    readinessSources: () => state.readinessSources ?? ['store'],
    sourceStatuses: () => state.sourceStatuses ?? [],
  } as unknown as Join;
  return withApiErrors(opsRoutes(join));
}
