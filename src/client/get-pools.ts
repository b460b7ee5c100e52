// GET /pools from one replica, checked against the contract's schema; and `getPools()`, the one-shot read
// that tries each replica in turn.
import type { z } from 'zod';
import { poolListSchema, routerListSchema, type PoolList, type RouterList } from '../contract/index.js';
import { describeErrorReply } from './error-reply.js';
import { HttpTransport, TransportError, type HttpTransportOptions, type TlsProblem } from './http-transport.js';
import { nextStep } from './next-step.js';
import { ReplicaRotation } from './replica-rotation.js';

export type ListReply =
  /** `etag`: the list's tag, to send as `etag` next time. */
  | { ok: true; list: PoolList; etag: string | undefined }
  /** 304: the list is still the one that came with the `etag` sent. */
  | { ok: true; list: undefined; etag: string }
  /** `status` when the replica answered otherwise; `tls` when TLS failed in a way the caller can fix. */
  | { ok: false; reason: string; status?: number; tls?: TlsProblem };

/** The codings GET /pools is asked in (a 100,000-pool list is about 30 MiB as it is, under 2 MiB in either). */
export const ACCEPT_ENCODING = 'gzip, br';

/**
 * One GET /pools from `server`, compressed; with `etag` (the tag of the list the caller holds from this
 * server) a conditional one, answered 304 while the list is unchanged. Never throws (a failure comes back
 * with its reason).
 */
export async function readPoolList(options: {
  transport: HttpTransport;
  server: string;
  timeoutMs: number;
  signal?: AbortSignal;
  etag?: string;
  /** The list read (default `/pools`) and its schema (default the pools'): GET /routers reads the same way. */
  path?: string;
  schema?: z.ZodType;
}): Promise<ListReply> {
  const path = options.path ?? '/pools';
  const schema = options.schema ?? poolListSchema;
  try {
    const reply = await options.transport.request(`${options.server}${path}`, {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      headers: { 'accept-encoding': ACCEPT_ENCODING, ...(options.etag === undefined ? {} : { 'if-none-match': options.etag }) },
    });
    if (reply.status === 304 && options.etag !== undefined) return { ok: true, list: undefined, etag: options.etag };
    if (reply.status !== 200) return { ok: false, reason: `GET ${path}: ${describeErrorReply(reply.status, reply.body)}`, status: reply.status };
    let body: unknown;
    try {
      body = JSON.parse(reply.body);
    } catch {
      return { ok: false, reason: `GET ${path} answered with a body that is not JSON` };
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { ok: false, reason: `GET ${path} answered a body that breaks the contract at ${issue?.path.join('.') || 'the top'}` };
    }
    return { ok: true, list: parsed.data as PoolList, etag: reply.etag };
  } catch (error) {
    if (!(error instanceof TransportError)) return { ok: false, reason: String(error) };
    return { ok: false, reason: error.reason, ...(error.tls === undefined ? {} : { tls: error.tls }) };
  }
}

export interface GetPoolsOptions extends HttpTransportOptions {
  /** Base URLs of poolscope replicas, e.g. `http://poolscope:8080`; tried in turn from a random one. */
  servers: readonly string[];
  /** Per replica (default 10 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  random?: () => number;
}

/**
 * Reads the listed pools once, from the first replica that answers.
 *
 * Mind `complete`: when it is false the list may miss pools (docs/contract.md §5); a caller that keeps a view
 * should use {@link watchPools}, or {@link PoolMap.applyList}, which apply the merge rule (extended with
 * regions: a pool whose every lease region is `dropped` leaves, docs/contract.md §7).
 *
 * @throws NoReplicaListedError naming each replica's failure, and what to do about it, when none gave the list.
 */
export async function getPools(options: GetPoolsOptions): Promise<PoolList> {
  return getList<PoolList>(options, '/pools', poolListSchema);
}

/** Reads the routers once (GET /routers, docs/contract.md §10), from the first replica that answers, as getPools. */
export async function getRouters(options: GetPoolsOptions): Promise<RouterList> {
  return getList<RouterList>(options, '/routers', routerListSchema);
}

async function getList<L>(options: GetPoolsOptions, path: string, schema: z.ZodType): Promise<L> {
  const rotation = new ReplicaRotation({ servers: options.servers, random: options.random });
  const transport = new HttpTransport(options);
  const failures: ReplicaFailure[] = [];
  try {
    for (let attempt = 0; attempt < rotation.servers.length; attempt++) {
      const server = rotation.current;
      const reply = await readPoolList({ transport, server, timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal, path, schema });
      if (reply.ok && reply.list !== undefined) return reply.list as L;
      // Asked without a tag, a 304 never comes back as a success (readPoolList refuses it).
      failures.push(reply.ok ? { server, reason: 'not modified' } : { ...reply, server });
      rotation.failed();
    }
  } finally {
    transport.close();
  }
  const setup = { token: options.token !== undefined, ca: options.ca !== undefined, cert: options.cert !== undefined, access: 'read' } as const;
  throw new NoReplicaListedError(failures, [...new Set(failures.map((failure) => nextStep(failure, setup)).filter((step) => step !== undefined))], path === '/pools' ? 'pools' : 'routers');
}

export interface ReplicaFailure {
  server: string;
  reason: string;
  status?: number;
  tls?: TlsProblem;
}

/**
 * No replica gave GET /pools. The message is one line: each replica's failure, then what to do about them
 * (`next: pass a read token with --token-file`) when a flag fixes it.
 */
export class NoReplicaListedError extends Error {
  constructor(
    readonly failures: readonly ReplicaFailure[],
    readonly nextSteps: readonly string[],
    what = 'pools',
  ) {
    const next = nextSteps.length === 0 ? '' : `; next: ${nextSteps.join('; ')}`;
    super(`no poolscope replica listed the ${what} (${failures.map((f) => `${f.server}: ${f.reason}`).join('; ')})${next}`);
    this.name = 'NoReplicaListedError';
  }
}
