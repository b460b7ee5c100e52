// The requests tests send to the service: to the URL of a socket (fetch), or to the app itself
// (`app.request()`, no socket), the same way.
import type { Hono } from 'hono';
import { poolListSchema, type PoolList } from '../../src/contract/index.js';

/** Where a test sends a request: the URL of a socket, or the app itself (`app.request()`, no socket). */
export type Target = string | Hono;

/** A request to `path` on `target`. */
export function request(target: Target, path: string, init?: RequestInit): Promise<Response> {
  return typeof target === 'string' ? fetch(`${target}${path}`, init) : Promise.resolve(target.request(path, init));
}

/** POST /pools with a JSON body (a string is sent as it is). */
export function postJson(target: Target, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return request(target, '/pools', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** GET /pools (with a query such as `?model=m`), parsed by the contract's schema. */
export async function listPools(target: Target, query = ''): Promise<PoolList> {
  return poolListSchema.parse(await (await request(target, `/pools${query}`)).json());
}
