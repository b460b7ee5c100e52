// Small HTTP helpers for the parts that drive poolscope from the benchmark process itself.

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
