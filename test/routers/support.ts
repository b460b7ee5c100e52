// What the router tests send and read: POST /routers and GET /routers, over a socket or app.request().
import { routerListSchema, type RouterList } from '../../src/contract/index.js';
import { request, type Target } from '../support/http.js';

/** POST /routers with a JSON body (a string is sent as it is). */
export function postRouter(target: Target, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return request(target, '/routers', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** GET /routers (with a query such as `?region=r`), parsed by the contract's schema. */
export async function listRouters(target: Target, query = ''): Promise<RouterList> {
  return routerListSchema.parse(await (await request(target, `/routers${query}`)).json());
}

