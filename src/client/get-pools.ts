// GET /pools from one replica, checked against the contract's schema; and `getPools()`, the one-shot read
// that tries each replica in turn.
import { poolListSchema, type PoolList } from '../contract/index.js';
import { HttpTransport, TransportError, type HttpTransportOptions } from './http-transport.js';
import { ReplicaRotation } from './replica-rotation.js';

export type ListReply =
  /** `etag`: the list's tag, to send as `etag` next time. */
  | { ok: true; list: PoolList; etag: string | undefined }
  /** 304: the list is still the one that came with the `etag` sent. */
  | { ok: true; list: undefined; etag: string }
  | { ok: false; reason: string };

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
}): Promise<ListReply> {
  try {
    const reply = await options.transport.request(`${options.server}/pools`, {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      headers: { 'accept-encoding': ACCEPT_ENCODING, ...(options.etag === undefined ? {} : { 'if-none-match': options.etag }) },
    });
    if (reply.status === 304 && options.etag !== undefined) return { ok: true, list: undefined, etag: options.etag };
    if (reply.status !== 200) return { ok: false, reason: `GET /pools answered ${reply.status}` };
    let body: unknown;
    try {
      body = JSON.parse(reply.body);
    } catch {
      return { ok: false, reason: 'GET /pools answered with a body that is not JSON' };
    }
    const parsed = poolListSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { ok: false, reason: `GET /pools answered a body that breaks the contract at ${issue?.path.join('.') || 'the top'}` };
    }
    return { ok: true, list: parsed.data, etag: reply.etag };
  } catch (error) {
    return { ok: false, reason: error instanceof TransportError ? error.reason : String(error) };
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
 * @throws Error naming each replica's failure when none answered.
 */
export async function getPools(options: GetPoolsOptions): Promise<PoolList> {
  const rotation = new ReplicaRotation({ servers: options.servers, random: options.random });
  const transport = new HttpTransport(options);
  const failures: string[] = [];
  try {
    for (let attempt = 0; attempt < rotation.servers.length; attempt++) {
      const server = rotation.current;
      const reply = await readPoolList({ transport, server, timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal });
      if (reply.ok && reply.list !== undefined) return reply.list;
      // Asked without a tag, a 304 never comes back as a success (readPoolList refuses it).
      failures.push(`${server}: ${reply.ok ? 'not modified' : reply.reason}`);
      rotation.failed();
    }
  } finally {
    transport.close();
  }
  throw new Error(`no poolscope replica answered GET /pools (${failures.join('; ')})`);
}
