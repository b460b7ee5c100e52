// The load generator, run as its own process (bench/lib/autocannon.ts spawns it) so its CPU is not the
// measured process's. Reads a CannonConfig from the JSON file named by argv[2], runs autocannon (an
// unmeasured warm-up first when asked), writes one CannonResult as JSON on stdout.
import { readFileSync } from 'node:fs';
import autocannon, { type AutocannonOptions } from 'autocannon';
import type { CannonConfig, CannonResult } from './cannon-types.js';

async function main(): Promise<void> {
  const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CannonConfig;
  const headers: Record<string, string> = config.method === 'POST' ? { 'content-type': 'application/json' } : {};
  const requests = (config.bodies ?? [undefined]).map((body) => ({
    method: config.method,
    path: config.path,
    headers,
    ...(body === undefined ? {} : { body }),
  }));
  const options = (durationSecs: number): AutocannonOptions => ({
    url: config.url,
    connections: config.connections,
    duration: durationSecs,
    timeout: 10,
    requests,
  });
  if (config.warmupSecs) await autocannon(options(config.warmupSecs));
  const result = await autocannon(options(config.durationSecs));
  const output: CannonResult = {
    requestsPerSec: result.requests.total / result.duration,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latency: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    durationSecs: result.duration,
    bytesPerSec: result.throughput.mean,
  };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

await main();
