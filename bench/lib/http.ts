// Small HTTP helpers for the parts that drive poolscope from the benchmark process itself.
import http from 'node:http';

export async function postPool(baseUrl: string, body: string): Promise<void> {
  const response = await fetch(`${baseUrl}/pools`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`POST ${baseUrl}/pools: ${response.status} ${text}`);
}

/** POST every body, at most `concurrency` at a time. */
export async function postAll(baseUrl: string, bodies: readonly string[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      await postPool(baseUrl, body);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
}

export interface PoolsHead {
  complete: boolean;
  count: number;
}

/** GET /pools: completeness and how many pools are listed. */
export async function readPools(baseUrl: string): Promise<PoolsHead> {
  const response = await fetch(`${baseUrl}/pools`);
  if (response.status !== 200) throw new Error(`GET ${baseUrl}/pools: ${response.status}`);
  const list = (await response.json()) as { complete: boolean; pools: unknown[] };
  return { complete: list.complete, count: list.pools.length };
}

/** Poll GET /pools until it lists `count` pools and says complete, or fail after `timeoutMs`. */
export async function waitForPools(baseUrl: string, count: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last: PoolsHead | undefined;
  while (performance.now() < deadline) {
    last = await readPools(baseUrl);
    if (last.complete && last.count === count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${baseUrl} did not list ${count} pools within ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it came over the wire (compressed when the reply says Content-Encoding). */
  body: Buffer;
  /** From sending the request to the body's last byte. */
  ms: number;
}

/** A GET through node:http, so nothing negotiates or decompresses on the caller's behalf. */
export function rawGet(url: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks), ms: performance.now() - started }),
      );
    });
    request.once('error', reject);
  });
}
